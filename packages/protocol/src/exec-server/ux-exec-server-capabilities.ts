/**
 * Capability flags ux's server adds to `environmentInfo.capabilities` (Codex clients ignore unknown
 * flags). A client uses an extension only when the server advertises it.
 */
export const UX_EXEC_SERVER_CAPABILITIES = {
  /** `process/resize {processId, rows, cols}` changes the PTY size of a tty process. */
  processResize: 'uxProcessResize',
  /** A `process/start` with a `sandbox` runs under an OS sandbox the server really applies. */
  sandboxedProcesses: 'uxSandboxedProcesses',
} as const;
