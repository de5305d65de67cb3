import type {
  DenialEvidence,
  EffectivePolicy,
  NetworkApprovalContext,
  SandboxBackend,
  SandboxCapability,
  SandboxDeniedError,
} from '@ux/protocol/core';

/** The sandbox an attempt runs in: the backend to plan with, and the policy it must enforce. */
export interface SelectedSandbox {
  backend: SandboxBackend;
  /** The session policy, widened by the command's approved additional permissions. */
  policy: EffectivePolicy;
  /**
   * What the backend declared it enforces (its probe's `enforces`), every need of `policy` among them;
   * absent for a remote environment's backend that does not say (the exec-server there checks).
   */
  enforces?: readonly SandboxCapability[];
  /** Backends preferred before this one that were not used, and why (`ChosenSandbox.passedOver`). */
  passedOver?: readonly { backend: string; reason: string }[];
}

export interface AttemptContext {
  /** 1 for the first run, 2 for the retry after a denial. */
  attempt: 1 | 2;
  callId: string;
  signal?: AbortSignal;
}

/**
 * An exit inside the early-exit window: exit code (-1 when unknown, 128 + n for a signal), the output so
 * far, and, from a remote host that judged it itself (`ExitStatus.sandboxDenied`), its verdict.
 */
export type EarlyExit = DenialEvidence & { sandboxDenied?: boolean };

/** What one run produced. `value` is the caller's (a live process, a result); the orchestrator never reads it. */
export interface AttemptResult<T> {
  value: T;
  /**
   * Set when the process exited inside the early-exit window (150 ms after spawn, plus the 20 ms
   * output settle): its exit code (-1 when unknown) and the output so far. Only such an exit can be a
   * sandbox denial that the retry gates act on; a later exit is the caller's to report.
   */
  earlyExit?: EarlyExit;
  /**
   * Set when a managed network proxy blocked the run and asked for approval of a host. Unified exec
   * never sets it: its network blocks go through deferred approvals, so the network retry is
   * unreachable there (row 17 of the decision table).
   */
  networkDenial?: { context: NetworkApprovalContext | null };
}

/**
 * Runs the command once: `sandbox` is `null` for an unsandboxed run. It must not retry by itself;
 * errors it throws (a spawn failure, say) reach the caller of `run` unchanged.
 */
export type Attempt<T> = (
  sandbox: SelectedSandbox | null,
  context: AttemptContext,
) => Promise<AttemptResult<T>>;

/** How a command ended up, when it was allowed to run. */
export type OrchestratorOutcome<T> =
  | {
      status: 'completed';
      value: T;
      /** The sandbox of the attempt that produced `value`. */
      sandbox: SelectedSandbox | null;
      attempts: 1 | 2;
      /** A retry without the sandbox (or under deny-read, with it) succeeded after a denial. */
      escalated: boolean;
    }
  | {
      status: 'denied';
      /** The denied attempt's value (an exited process); render it as an ordinary receipt. */
      value: T;
      denial: SandboxDeniedError;
      sandbox: SelectedSandbox;
      attempts: 1 | 2;
    };
