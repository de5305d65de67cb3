export { buildEnvironment, PINNED_ENVIRONMENT } from './build-environment.js';
export { POST_EXIT_CLOSE_WAIT_CAP_MS } from './collect-output.js';
export {
  createUnifiedExec,
  LAST_OUTPUT_LINES,
  type ProcessInfo,
  type SessionWatcher,
  type UnifiedExec,
  type UnifiedExecOptions,
} from './create-unified-exec.js';
export type { Launched, ProcessStarter, SandboxLevel } from './door-context.js';
export type { DoorEnvironment, RemoteSpawnRequest, RemoteStarter } from './door-environments.js';
export { type DenialEvidence, nameDenial } from './name-denial.js';
export {
  MAX_OUTPUT_DELTAS_PER_CALL,
  OUTPUT_DELTA_MAX_BYTES,
  TRAILING_OUTPUT_GRACE_MS,
} from './output-stream.js';
export { MAX_UNIFIED_EXEC_PROCESSES, PRUNE_PROTECTED_RECENT } from './process-store.js';
export { REFUSAL_NEXT_STEPS } from './refusal-response.js';
export { remoteEnvironmentPolicyProblem } from './remote-environment-policy-problem.js';
export {
  renderNotRun,
  renderResponseText,
  renderResultText,
  renderShellCommandText,
  runningNextStep,
  sandboxLevelText,
} from './render-response.js';
export { resolveArgv } from './resolve-argv.js';
export { DEFAULT_SHELL_COMMAND_TIMEOUT_MS, TIMEOUT_EXIT_CODE } from './shell-command.js';
export { ShellSnapshots, SNAPSHOT_CAPTURE_POLICY } from './shell-snapshots.js';
export type { CallContext, ToolResponse } from './tool-response.js';
export { approxTokenCount, formattedTruncate } from './truncate-output.js';
export { CTRL_C, MAX_WRITE_STDIN_BYTES, POST_WRITE_SETTLE_MS } from './write-stdin.js';
