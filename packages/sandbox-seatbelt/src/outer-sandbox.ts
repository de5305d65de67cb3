/**
 * Environment variables that say the process already runs inside a sandbox: ux's own marker, Codex's,
 * sandbox-runtime's, and the macOS App Sandbox's container id.
 */
export const OUTER_SANDBOX_MARKERS = [
  'UX_SANDBOX',
  'CODEX_SANDBOX',
  'SANDBOX_RUNTIME',
  'APP_SANDBOX_CONTAINER_ID',
];

/** The first outer-sandbox marker set (non-empty) in an environment, as `NAME=value`, or undefined. */
export function outerSandboxMarker(env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const name of OUTER_SANDBOX_MARKERS) {
    const value = env[name];
    if (value !== undefined && value !== '') return `${name}=${value}`;
  }
  return undefined;
}
