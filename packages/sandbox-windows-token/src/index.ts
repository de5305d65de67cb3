// The public API: the backend, its pure planner, probe and denial classifier, and the job objects a
// host hands to `@ux/spawn`'s Windows spawner. The launcher and the Win32 surface behind it (koffi
// bindings, declarations, access masks, launch spec, SIDs, paths) are private to the
// package: the launcher runs from `dist/windows-token-launcher.js`, which a plan's argv names. Command
// lines are quoted by `windowsCommandLine` of `@ux/protocol`, shared with `@ux/spawn`.
export { classifyWindowsDenial } from './classify-windows-denial.js';
export { loadKoffiJobObjects } from './koffi-job-objects.js';
export {
  nodeWindowsTokenProbeHost,
  probeWindowsToken,
  WINDOWS_TOKEN_ENFORCES,
  type WindowsTokenProbeHost,
} from './probe-windows-token.js';
export { sandboxPlugin } from './sandbox-plugin.js';
export type { Win32Job, Win32JobObjects } from './win32-job-objects.js';
export {
  type AceTrustee,
  planWindowsToken,
  type WindowsAce,
  type WindowsTokenHostFacts,
  type WindowsTokenPlan,
  type WindowsTokenSpec,
} from './windows-token-plan.js';
export {
  createWindowsTokenSandbox,
  defaultLauncherPath,
  type WindowsTokenSandboxSettings,
} from './windows-token-sandbox.js';
