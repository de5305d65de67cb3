export { classifyLandlockDenial } from './classify-landlock-denial.js';
export {
  checkedLauncher,
  createLandlockSandbox,
  type LandlockSandbox,
  type LandlockSandboxSettings,
} from './create-landlock-sandbox.js';
export {
  LANDLOCK_BACKEND_ID,
  LANDLOCK_DEVICES,
  LANDLOCK_MIN_ABI,
  LANDLOCK_NET_ABI,
  LANDLOCK_SCOPE_ABI,
  LANDLOCK_WRITE_ABI,
  type LandlockHost,
  type LandlockPlan,
  landlockEnforces,
  limitNotes,
  MAX_RULE_BYTES,
  planLandlock,
} from './landlock-plan.js';
export { type LandlockPluginSettings, landlockSettingsSchema, sandboxPlugin } from './sandbox-plugin.js';

import { sandboxPlugin } from './sandbox-plugin.js';
export default sandboxPlugin;
