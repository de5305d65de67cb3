import { SANDBOX_SPECIFICATION_VERSION, type SandboxPlugin, type SettingsSchema } from '@ux/protocol/core';
import { createLandlockSandbox } from './create-landlock-sandbox.js';
import { LANDLOCK_BACKEND_ID } from './landlock-plan.js';

/** `[sandbox.landlock]`: no settings yet; the table must be empty (or absent). */
export type LandlockPluginSettings = Record<string, never>;

/** A Standard Schema (https://standardschema.dev) that accepts only an empty table. */
export const landlockSettingsSchema: SettingsSchema<LandlockPluginSettings> = {
  '~standard': {
    version: 1,
    vendor: 'ux',
    validate(value) {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return { issues: [{ message: 'must be a table' }] };
      const keys = Object.keys(value);
      if (keys.length > 0)
        return {
          issues: keys.map((key) => ({
            message: `unknown setting "${key}": [sandbox.landlock] has no settings`,
            path: [key],
          })),
        };
      return { value: {} };
    },
  },
};

/**
 * The module export ux loads when `sandbox_plugins` names `@ux/sandbox-landlock`. Creating the backend
 * spawns nothing and touches no file until it is probed or asked for a plan.
 */
export const sandboxPlugin: SandboxPlugin<LandlockPluginSettings> = {
  specificationVersion: SANDBOX_SPECIFICATION_VERSION,
  id: LANDLOCK_BACKEND_ID,
  platforms: ['linux'],
  description:
    "Landlock and seccomp without namespaces, for hosts where bubblewrap cannot start; enforces what the kernel's Landlock ABI allows (no process isolation, no network by domain)",
  settings: landlockSettingsSchema,
  create(_settings, host) {
    return createLandlockSandbox(host.quarantineDir ? { quarantineDir: host.quarantineDir } : {});
  },
};
