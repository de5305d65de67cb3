import {
  type EffectivePolicy,
  type ExecParams,
  type ExecProcess,
  type HostState,
  InvalidArgumentsError,
  type LaunchPlan,
  MissingCommandLineError,
  type SandboxBackend,
  type SandboxCapability,
  SandboxUnavailableError,
  type Spawner,
  SpawnFailedError,
  UxError,
} from '@ux/protocol';
import {
  applyShellEnvironmentPolicy,
  type DecodedSandboxContext,
  decodeEnvPolicy,
  decodeSandboxContext,
  pathFromFileUri,
} from '@ux/protocol-utils';
import { launchPlanned } from '@ux/spawn';
import { decodeParams, internalError, invalidParams } from './rpc-error.js';
import { type SandboxChoice, wireSandboxType } from './sandbox-selection.js';
import type { ShellSnapshotRequest, ShellSnapshotStore } from './shell-snapshot-store.js';
import { withHostState } from './with-host-state.js';

export interface StartDependencies {
  spawner: Spawner;
  /** The backend for a policy (`createSandboxSelection`). */
  selectSandbox: (policy?: EffectivePolicy) => Promise<SandboxChoice>;
  /** The server's own environment, filtered by an `envPolicy`. */
  serverEnv: Readonly<Record<string, string | undefined>>;
  /** Shell snapshots (`shellSnapshot`); absent where the server offers none (Windows). */
  snapshots?: ShellSnapshotStore;
  /** This host's ux files every sandboxed start keeps out of reach (`withHostState`). */
  hostState?: HostState;
  /** What the server's helpers run: shown read-only inside every sandbox (`hostPaths`). */
  helperPaths?: readonly string[];
  /** What else the host adds to every policy (`ExecServerOptions.protectPolicy`). */
  protectPolicy?: (
    policy: EffectivePolicy,
    place: { cwd: string; projectRoots?: readonly string[] },
  ) => EffectivePolicy;
}

export interface StartedProcess {
  process: ExecProcess;
  sandbox?: { backend: SandboxBackend; plan: LaunchPlan; enforces: readonly SandboxCapability[] };
  /** What the start result reports: `none`, or the wire name of the sandbox applied. */
  sandboxType: string;
  /** Resolves once the process closed and its sandbox was cleaned up (once). Never rejects. */
  settled: Promise<void>;
}

/**
 * Turns validated `process/start` params into a running process: the `file://` cwd, the environment
 * (exact, or built by `envPolicy`), the sandbox (applied by this platform's backend, or a refusal that
 * says how to fix it; never a silent unsandboxed run) and the spawn. Nothing is spawned on bad input.
 */
export async function startProcess(deps: StartDependencies, params: ExecParams): Promise<StartedProcess> {
  const cwd = decodeParams(() => pathFromFileUri(params.cwd, 'cwd'));
  refuseUnsupported(params);
  const snapshotRequest = shellSnapshotRequest(params.shellSnapshot, deps.snapshots !== undefined);
  const env = childEnvironment(deps.serverEnv, params);
  let wanted = hostStateAdded(
    decodeParams(() => decodeSandboxContext(params.sandbox)),
    deps.hostState,
  );
  if (wanted && deps.protectPolicy)
    wanted = {
      ...wanted,
      policy: deps.protectPolicy(wanted.policy, {
        cwd,
        ...(wanted.projectRoots ? { projectRoots: wanted.projectRoots } : {}),
      }),
    };
  // The server's helpers (on the commands' PATH through prependPathDirs) and what they run.
  let hostPaths: string[] = [...(deps.helperPaths ?? [])];
  const stdin = params.pipeStdin ? 'pipe' : 'closed';
  const arg0 = params.arg0 ?? undefined;
  if (arg0 !== undefined && wanted) {
    throw invalidParams(
      'arg0 cannot be combined with a sandbox: the sandbox launcher starts the program itself',
    );
  }
  let argv = params.argv;
  if (snapshotRequest && deps.snapshots) {
    const launch = await deps.snapshots.launch(snapshotRequest, params.argv, {
      cwd,
      env,
      sandbox: wanted,
      ...(params.envPolicy ? { envPolicy: decodeEnvPolicy(params.envPolicy) } : {}),
    });
    argv = launch.argv;
    if (launch.file && wanted) {
      wanted = readableSnapshot(wanted, launch.file);
      // Bound in read-only after every mask: the snapshot lives in the runtime root sandboxes hide.
      hostPaths = [...hostPaths, launch.file];
    }
  }
  const request = {
    argv,
    cwd,
    env,
    tty: params.tty,
    stdin,
    ...(arg0 === undefined ? {} : { arg0 }),
  } as const;
  const start = (spawn: Parameters<Spawner['spawn']>[0]) => startWith(deps.spawner, params.argv, spawn);

  if (!wanted) {
    const { process, settled } = await launchPlanned({ request, spawn: start });
    return { process, sandboxType: 'none', settled };
  }

  const choice = await deps.selectSandbox(wanted.policy);
  if (!choice.available) {
    throw internalError(
      `sandbox requested but none can be applied here: ${choice.reason}; fix: ${choice.fix}. The command was not run.`,
    );
  }
  const policy = wanted.policy;
  const { projectRoots } = wanted;
  const { process, plan, settled } = await launchPlanned({
    request,
    spawn: start,
    plan: async () => {
      try {
        return await choice.backend.plan({
          argv,
          cwd,
          env,
          policy,
          projectRoots,
          tty: params.tty,
          ...(hostPaths.length > 0 ? { hostPaths } : {}),
        });
      } catch (error) {
        if (InvalidArgumentsError.isInstance(error)) throw invalidParams(`sandbox: ${error.message}`);
        if (SandboxUnavailableError.isInstance(error))
          throw internalError(`${error.message}. The command was not run.`);
        throw error;
      }
    },
  });
  return {
    process,
    sandbox: { backend: choice.backend, plan: plan!, enforces: choice.enforces },
    sandboxType: wireSandboxType(choice.backend.id),
    settled,
  };
}

/**
 * The child environment: exactly `env` without an `envPolicy`; with one, the server's own variables
 * by the policy (Codex's shell-environment-policy rules), then `env` on top.
 */
function childEnvironment(
  serverEnv: Readonly<Record<string, string | undefined>>,
  params: ExecParams,
): Record<string, string> {
  if (!params.envPolicy) return { ...params.env };
  return { ...applyShellEnvironmentPolicy(serverEnv, decodeEnvPolicy(params.envPolicy)), ...params.env };
}

/**
 * The `shellSnapshot` parameter, checked: a non-empty `scopeId`, a shell `name`, an absolute `path`.
 * Refused where the server offers no snapshots (it then does not advertise `shellSnapshotV2`).
 */
function shellSnapshotRequest(
  value: ExecParams['shellSnapshot'],
  supported: boolean,
): ShellSnapshotRequest | undefined {
  if (value === undefined || value === null) return undefined;
  if (!supported)
    throw invalidParams(
      'shellSnapshot is not supported by this exec-server (it does not advertise shellSnapshotV2)',
    );
  const { scopeId, shell } = value;
  if (scopeId === '' || scopeId.includes('\0'))
    throw invalidParams('shellSnapshot.scopeId must be a non-empty string without NUL bytes');
  if (shell.name === '') throw invalidParams('shellSnapshot.shell.name must not be empty');
  if (!shell.path.startsWith('/') || shell.path.includes('\0'))
    throw invalidParams(
      `shellSnapshot.shell.path must be an absolute path (the shell the argv starts), got ${JSON.stringify(shell.path)}`,
    );
  return { scopeId, shell: { name: shell.name, path: shell.path } };
}

/** The decoded sandbox with this host's ux files kept out of reach. */
function hostStateAdded(
  wanted: DecodedSandboxContext | undefined,
  hostState: HostState | undefined,
): DecodedSandboxContext | undefined {
  if (!wanted || !hostState) return wanted;
  return { ...wanted, policy: withHostState(wanted.policy, hostState) };
}

/** The command's sandbox, letting it read the snapshot it sources (however the policy limits reads). */
function readableSnapshot(wanted: DecodedSandboxContext, file: string): DecodedSandboxContext {
  const { fileSystem } = wanted.policy;
  if (fileSystem.kind !== 'restricted') return wanted;
  return {
    ...wanted,
    policy: {
      ...wanted.policy,
      fileSystem: {
        ...fileSystem,
        entries: [...fileSystem.entries, { path: { type: 'path', path: file }, access: 'read' }],
      },
    },
  };
}

/** Requests this server cannot honour exactly are refused rather than run differently. */
function refuseUnsupported(params: ExecParams): void {
  if (params.enforceManagedNetwork || (params.networkProxy !== undefined && params.networkProxy !== null)) {
    throw invalidParams(
      'managed network (enforceManagedNetwork, networkProxy) is not supported by this exec-server',
    );
  }
}

async function startWith(
  spawner: Spawner,
  argv: readonly string[],
  request: Parameters<Spawner['spawn']>[0],
): Promise<ExecProcess> {
  try {
    return await spawner.spawn(request);
  } catch (error) {
    if (MissingCommandLineError.isInstance(error) || InvalidArgumentsError.isInstance(error)) {
      throw invalidParams(error.message);
    }
    if (SpawnFailedError.isInstance(error) || UxError.isInstance(error)) throw internalError(error.message);
    throw internalError(`failed to start ${argv[0]}: ${(error as Error).message}`);
  }
}
