import type { AdditionalPermissions, SandboxPermissions } from '@ux/protocol/core';

/** One command to decide on and run. */
export interface OrchestratorRequest {
  callId: string;
  turnId?: string;
  /** The argv before sandboxing, e.g. `['/bin/bash', '-lc', 'cargo test']`. */
  argv: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  tty: boolean;
  /** Default `use_default`. */
  sandboxPermissions?: SandboxPermissions;
  /** Required with `with_additional_permissions`, refused otherwise. */
  additionalPermissions?: AdditionalPermissions;
  /** The requested permissions were granted earlier (`request_permissions`); no pre-gate, no prompt for them. */
  permissionsPreapproved?: boolean;
  /** The model's reason, shown when asking. */
  justification?: string;
  /** The model's suggested prefix for a saved rule. */
  prefixRule?: readonly string[];
  /**
   * This turn sends every approval, retries included, to the automatic reviewer; default
   * `settings.strictAutoReview`.
   */
  strictAutoReview?: boolean;
  /** Aborts pending reviews (they answer `abort`); passed on to the attempts. */
  signal?: AbortSignal;
  /**
   * The remote execution environment the command runs in (a key of `settings.environmentSandboxes`);
   * default this machine. An approval for the session covers the same command in the same environment
   * only.
   */
  environmentId?: string;
  /** @deprecated Use `environmentId`; read only when `environmentId` is absent. */
  environment?: string;
}

/** The request's execution environment id (`environmentId`, else the deprecated `environment`). */
export function requestEnvironmentId(request: OrchestratorRequest): string | undefined {
  return request.environmentId ?? request.environment;
}
