export { capabilitySidFor, randomRunSid } from './capability-sid.js';
export { classifyWindowsDenial } from './classify-windows-denial.js';
export { environmentBlock, loadKoffiWin32Api } from './koffi-win32-api.js';
export {
  decodeLaunchSpec,
  encodeLaunchSpec,
  parseLauncherArguments,
  type WindowsTokenLaunchSpec,
} from './launch-spec.js';
export { launcherMain, nodeLauncherHost } from './launcher-main.js';
export {
  nodeWindowsTokenProbeHost,
  probeWindowsToken,
  type WindowsTokenProbeHost,
} from './probe-windows-token.js';
export {
  LAUNCHER_FAILURE_EXIT_CODE,
  type LauncherHost,
  runWindowsTokenLauncher,
} from './run-windows-token-launcher.js';
export * from './win32-access.js';
export {
  type CreatedProcess,
  type CreateProcessOptions,
  type ResolvedAce,
  type Win32Api,
  Win32CallError,
  type Win32Handle,
} from './win32-api.js';
export { declareWin32Types, WIN32_FUNCTIONS, type Win32FunctionName } from './win32-declarations.js';
export { LONG_PATH_THRESHOLD, normalizeWin32Path, win32ApiPath } from './win32-path.js';
export { windowsCommandLine } from './windows-command-line.js';
export { DEAD_PROXY, type WindowsSandboxEnv, windowsSandboxEnv } from './windows-sandbox-env.js';
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
