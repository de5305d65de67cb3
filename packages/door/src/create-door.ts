import { resolveFeatures } from '@ux/config';
import { type FeatureFlags, planTools } from '@ux/features';
import { createOrchestrator, needsSandbox } from '@ux/orchestrator';
import type {
  ApprovalPolicy,
  EffectivePolicy,
  Reviewer,
  SandboxBackend,
  SandboxPolicy,
  ShellEnvironmentPolicy,
  ToolDefinition,
  UxEvent,
} from '@ux/protocol/core';
import { InvalidArgumentsError } from '@ux/protocol/core';
import type { SandboxRegistry } from '@ux/protocol-utils';
import { createSandboxRegistry } from '@ux/protocol-utils';
import {
  type CallContext,
  createUnifiedExec,
  type ProcessStarter,
  type ToolResponse,
  type UnifiedExec,
} from '@ux/unified-exec';
import { closeSandboxRegistry } from './close-sandbox-registry.js';
import { localSpawnerForPlatform } from './local-spawner-for-platform.js';
import { createPlatformSandboxRegistry } from './platform-sandbox-registry.js';

/**
 * What sandboxed commands may do by default: write inside `cwd` (and the temporary directories),
 * read everywhere else, no network.
 */
export const DEFAULT_DOOR_POLICY: SandboxPolicy = {
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: false,
  exclude_slash_tmp: false,
};

export interface DoorOptions {
  /** The session's working directory (absolute): commands start there and may write there. */
  cwd: string;
  /**
   * Who answers approval questions. Optional: without it the approval policy defaults to `never`
   * (nothing asks; what the sandbox blocks comes back as a failure), and any question that still
   * arises is refused at once as unattended.
   */
  review?: Reviewer;
  /** When to ask `review`; default `on-request` with a reviewer, `never` without. */
  approvalPolicy?: ApprovalPolicy;
  /** What sandboxed commands may do; default `DEFAULT_DOOR_POLICY` (workspace-write, no network). */
  policy?: SandboxPolicy | EffectivePolicy;
  /** Feature flags over the defaults of this platform (`unified_exec`, `shell_snapshot`, …). */
  features?: Partial<FeatureFlags>;
  /**
   * The sandbox: one backend, or a registry to select from. Default the platform's shipped backends
   * (bubblewrap, else Landlock on Linux; Seatbelt on macOS; the restricted token on Windows), which the
   * door opens and closes. A backend or registry given here is the caller's to close.
   */
  sandbox?: SandboxBackend | SandboxRegistry;
  /** Starts this machine's processes; default the platform's local spawner (`@ux/spawn`). */
  spawner?: ProcessStarter;
  /** Every event of the door (begin, output, end, approvals, …), from the first command on. */
  onEvent?: (event: UxEvent) => void;
  /** Problems that do not stop a command (a feature falling back, a listener that threw). */
  onWarning?: (message: string) => void;
  /** Which host variables commands start from (the shell environment policy); default all but secrets. */
  shellEnvironmentPolicy?: ShellEnvironmentPolicy;
  /** The variables that policy filters; default `process.env`. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** The user's shell; default `$SHELL`, else `/bin/bash`. */
  userShell?: string;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
}

/** A tool call's context: every field optional (a call id is made up when missing). */
export type DoorCallContext = Partial<CallContext>;

/** The door an embedder hands to its model: two tools, their handlers, events, and one shutdown. */
export interface Door {
  /** The tool definitions to give the model (`exec_command`, `write_stdin`, per the features). */
  readonly tools: ToolDefinition[];
  /** Handles an `exec_command` call; never throws: refusals and failures are results too. */
  execCommand(args: unknown, context?: DoorCallContext): Promise<ToolResponse>;
  /** Handles a `write_stdin` call (poll or type into a running command). */
  writeStdin(args: unknown, context?: DoorCallContext): Promise<ToolResponse>;
  /** Dispatches a tool call by name (an unknown name is a failed result, not a throw). */
  call(name: string, args: unknown, context?: DoorCallContext): Promise<ToolResponse>;
  /** Subscribes to events; returns the unsubscribe function. */
  onEvent(listener: (event: UxEvent) => void): () => void;
  /** Ends every command, then closes what the door opened (its sandbox backends). */
  shutdown(): Promise<void>;
  /** The whole door beneath (`@ux/unified-exec`): processes, interrupts, the control-plane calls. */
  readonly unifiedExec: UnifiedExec;
}

/**
 * The door in one call: the platform's sandbox, the default features and policy, the local spawner.
 * Fails closed: when the policy needs a sandbox and none can run here it rejects with
 * `SandboxUnavailableError`, saying what is missing and how to get it, and starts nothing.
 */
export async function createDoor(options: DoorOptions): Promise<Door> {
  if (
    typeof options.cwd !== 'string' ||
    (!options.cwd.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(options.cwd))
  )
    throw new InvalidArgumentsError({
      tool: 'createDoor',
      issues: [{ path: 'cwd', message: `must be an absolute path (got ${JSON.stringify(options.cwd)})` }],
    });
  const platform = options.platform ?? process.platform;
  const given = givenRegistry(options.sandbox);
  // The door's own backends are closed with it; a registry the caller gave stays the caller's.
  const own = given ? undefined : createPlatformSandboxRegistry({ platform });
  try {
    const orchestrator = createOrchestrator({
      sandboxRegistry: given ?? own!,
      platform,
      approvalPolicy: options.approvalPolicy ?? (options.review ? 'on-request' : 'never'),
      policy: options.policy ?? DEFAULT_DOOR_POLICY,
      ...(options.review ? { reviewer: options.review } : {}),
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    });
    if (needsSandbox(orchestrator.policy)) await orchestrator.sandboxes.select(orchestrator.policy);
    // The door's own spawner keeps a host reaper while commands run: it ends with the door.
    const ownSpawner = options.spawner ? undefined : await localSpawnerForPlatform({ platform });
    const flags = { ...resolveFeatures({ platform }).flags, ...options.features };
    const unifiedExec = createUnifiedExec({
      orchestrator,
      spawner: options.spawner ?? ownSpawner!,
      toolPlan: planTools({
        flags,
        platform,
        ...(options.userShell ? { userShell: options.userShell } : {}),
      }),
      cwd: options.cwd,
      // Every question put to the reviewer says whether it can be asked: without one, nobody can.
      reviewerCanAsk: options.review !== undefined,
      ...(options.userShell ? { userShell: options.userShell } : {}),
      ...(options.shellEnvironmentPolicy ? { shellEnvironmentPolicy: options.shellEnvironmentPolicy } : {}),
      ...(options.baseEnv ? { baseEnv: options.baseEnv } : {}),
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    });
    if (options.onEvent) unifiedExec.onEvent(options.onEvent);
    return doorOf(unifiedExec, async () => {
      await ownSpawner?.close?.();
      await closeSandboxRegistry(own);
    });
  } catch (error) {
    await closeSandboxRegistry(own);
    throw error;
  }
}

/** The embedder's view of a door, whose shutdown also closes what the door opened (`closeOwn`). */
function doorOf(unifiedExec: UnifiedExec, closeOwn: () => Promise<void>): Door {
  const withId = (context: DoorCallContext = {}): CallContext => ({
    ...context,
    callId: context.callId ?? '',
  });
  let closing: Promise<void> | undefined;
  return {
    tools: unifiedExec.tools,
    execCommand: (args, context) => unifiedExec.execCommand(args, withId(context)),
    writeStdin: (args, context) => unifiedExec.writeStdin(args, withId(context)),
    call: (name, args, context) => unifiedExec.call(name, args, withId(context)),
    onEvent: (listener) => unifiedExec.onEvent(listener),
    shutdown() {
      closing ??= (async () => {
        try {
          await unifiedExec.shutdown();
        } finally {
          await closeOwn();
        }
      })();
      return closing;
    },
    unifiedExec,
  };
}

/** A sandbox option as a registry (one backend registers under its id); undefined: the platform's. */
function givenRegistry(sandbox: DoorOptions['sandbox']): SandboxRegistry | undefined {
  if (sandbox === undefined) return undefined;
  if ('specificationVersion' in sandbox) return createSandboxRegistry({ [sandbox.id]: sandbox });
  return sandbox;
}
