/** What a permission hook is asked (sent as JSON to command hooks). */
export interface PermissionHookRequest {
  tool: 'Bash';
  /** The shell script for a `bash -lc <script>` argv, else the argv as one command line. */
  command: string;
  argv: string[];
  cwd: string;
  /** The model's justification, when it gave one. */
  description?: string;
  /** `initial` before the first run; `retry` when asking to run again without the sandbox. */
  phase: 'initial' | 'retry';
  call_id: string;
}

/** A hook's answer: approve, refuse (with a message for the model), or leave it to the reviewers. */
export type PermissionHookDecision =
  | { decision: 'allow' }
  | { decision: 'deny'; message?: string }
  | { decision: 'ask' };

/**
 * A user-configured check that runs before any reviewer. A `deny` always wins; an `allow` approves the
 * first run but never a retry without the sandbox (that needs a reviewer's fresh consent). A hook that
 * throws counts as `deny`: hooks fail closed.
 */
export interface PermissionHook {
  readonly id: string;
  check(request: PermissionHookRequest, options: { signal: AbortSignal }): Promise<PermissionHookDecision>;
}
