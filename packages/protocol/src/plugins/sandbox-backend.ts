import type { EffectivePolicy } from '../policy/file-system-policy.js';
import type { SandboxCapability } from './sandbox-capabilities.js';

export const SANDBOX_SPECIFICATION_VERSION = 'ux-sandbox-v1';

/** How strongly a plan holds a guarantee: the OS enforces it, it is best effort, or it is not attempted. */
export type Enforcement = 'enforced' | 'advisory' | 'none';

/** What a launch plan really guarantees, so callers and users are told the truth. */
export interface SandboxEnforcement {
  fileSystem: Enforcement;
  network: Enforcement;
  /** Plain-language caveats ("network blocking needs the elevated set-up"). */
  notes: string[];
}

/** The result of checking whether a backend can run here. */
export type SandboxProbe =
  | {
      available: true;
      version?: string;
      details?: Record<string, string | number | boolean>;
      /**
       * What the backend enforces on this host (see `SANDBOX_CAPABILITIES`); it may depend on what
       * the probe found (a kernel's Landlock ABI). Absent: nothing, so no sandboxed policy runs on it.
       * The conformance suite checks each declared guarantee by running real commands.
       */
      enforces?: readonly SandboxCapability[];
    }
  | {
      available: false;
      /** What is missing or broken. */
      reason: string;
      /** How to fix it ("apt-get install bubblewrap", "sysctl -w kernel.unprivileged_userns_clone=1"). */
      fix: string;
    };

/** One command to wrap in a sandbox. */
export interface SandboxPlanRequest {
  argv: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  /** The complete environment computed for the child. */
  env: Readonly<Record<string, string>>;
  policy: EffectivePolicy;
  /** Workspace roots that `project_roots` entries resolve to; defaults to `[cwd]`. */
  projectRoots?: readonly string[];
  /** Whether the command gets a PTY (some backends must allow terminal devices). */
  tty: boolean;
  /**
   * Descriptors above stderr that the command must inherit from the launched process: ZshFork's
   * escalation socket (`ESCALATION_FD` of `@ux/spawn`), which the spawner puts in place. A backend
   * that closes inherited descriptors before the command starts (bwrap's launcher does, so nothing
   * else of the host reaches the sandbox) keeps exactly these, open as the spawner left them; one that
   * passes descriptors through anyway (Seatbelt's `sandbox-exec`) or starts the command without
   * inheritance (the Windows token launcher, where ZshFork does not exist) has nothing to do. Numbers
   * from 10 to 1023: 0–9 belong to shell scripts, and backends may use low numbers of their own.
   */
  keepFds?: readonly number[];
  /**
   * Files and directories the launch itself reads inside the sandbox (absolute host paths): the shell
   * snapshot the command sources, ux's `apply_patch` shim directory, the shell. A backend makes each
   * visible read-only at its own (canonical) path after every mask, so that neither a private `/tmp`
   * nor one of ux's hidden directories (`hostState.hidden`, the runtime roots) hides it, while a hidden
   * directory inside one stays hidden. Never writable, even inside a writable root. Missing ones are
   * skipped (the plan's notes say so). Not a grant of the policy: pass only ux's own files.
   */
  hostPaths?: readonly string[];
}

/**
 * Something the sandbox did while a command ran that the user and the model must hear about: a
 * protected path the command created (a backend that cannot pre-empt a missing name without leaving a
 * file on the host watches for it instead) was taken away at once.
 */
export interface SandboxNotice {
  kind: 'protected_path_undone';
  /** The path the command created. */
  path: string;
  /** Where it was moved (a quarantine directory); absent when it was removed, or could not be moved. */
  movedTo?: string;
  /** Set when taking it away failed: it is still there. */
  error?: string;
  /** One line for people and models: what happened, why, and what to do instead. */
  message: string;
}

/**
 * How to start the sandboxed command; a spawner runs it as it would any command.
 *
 * Signals (a rule for every backend, checked by the conformance suite): whatever wraps the command
 * must be transparent to them. SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to the launched process's group
 * (pipes) or to the terminal's foreground group (Ctrl-C on a PTY) must reach the command as they would
 * unsandboxed and must not end the wrapper, which stays until the command exits and then exits with
 * the command's own code (128 + N for a death by signal N). SIGKILL of the group ends everything the
 * sandbox holds, wrapper included.
 */
export interface LaunchPlan {
  argv: string[];
  cwd: string;
  /** The complete environment for the launched process. */
  env: Record<string, string>;
  /** The backend id that produced the plan (reported in events and receipts). */
  sandboxType: string;
  enforcement: SandboxEnforcement;
  /**
   * Runs after the process has exited and its output closed (stop watching, undo ACLs). Resolves once
   * every notice of this run has been delivered. Idempotent.
   */
  cleanup?: () => Promise<void>;
  /** Optional: subscribes to notices of this run (see `SandboxNotice`); returns the unsubscribe function. */
  onNotice?(listener: (notice: SandboxNotice) => void): () => void;
}

/** What a command left behind, for deciding whether the sandbox stopped it. */
export interface DenialEvidence {
  exitCode: number;
  output: string;
  /** The signal that killed it, when one did. */
  signal?: string;
}

/** A backend's own verdict; `unknown` leaves the decision to the generic heuristic. */
export type DenialVerdict = 'denied' | 'not_denied' | 'unknown';

/**
 * A sandbox backend plugin. It plans; it never spawns the command (it may keep a helper of its own
 * between plans, ended by `close()`). Create with a `createXSandbox(settings?)`
 * factory and hand it to `createSandboxRegistry`; nothing registers itself.
 */
export interface SandboxBackend {
  readonly specificationVersion: typeof SANDBOX_SPECIFICATION_VERSION;
  /** Stable lowercase id (`bwrap`, `seatbelt`, `windows-token`). */
  readonly id: string;
  /** `process.platform` values this backend runs on. */
  readonly platforms: readonly NodeJS.Platform[];
  /** Whether it can run here now, and if not, why and how to fix it. Never throws. */
  probe(): Promise<SandboxProbe>;
  /**
   * Wraps a command. Rejects with a `UxError`: `MissingCommandLineError` for an empty argv,
   * `InvalidArgumentsError` for a relative cwd or a policy it cannot express.
   */
  plan(request: SandboxPlanRequest): Promise<LaunchPlan>;
  /** Optional: recognise this backend's own denial signatures. */
  classifyDenial?(evidence: DenialEvidence): DenialVerdict;
  /**
   * Optional: ends what the backend keeps between plans (a helper process, private files). Plans made
   * afterwards start them again. Hosts call it when they are done with the backend; tests call it
   * before checking that nothing was left running.
   */
  close?(): Promise<void>;
}
