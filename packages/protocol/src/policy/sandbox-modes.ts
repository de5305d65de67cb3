/** The sandbox mode names, as used by `--sandbox` and `allowed_sandbox_modes`. */
export const sandboxModes = [
  'read-only',
  'workspace-write',
  'danger-full-access',
  'external-sandbox',
] as const;
export type SandboxMode = (typeof sandboxModes)[number];
