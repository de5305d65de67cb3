import { join } from 'node:path';
import {
  didYouMean,
  isAbsolutePath,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxPlugin,
  type SettingsSchema,
  type SettingsValidation,
} from '@ux/protocol/core';

/** `[sandbox.bwrap]` in config.toml. */
export interface BwrapPluginSettings {
  /** `path`: the absolute path of bwrap; default the first `bwrap` on PATH outside the working directory. */
  path?: string;
}

const KEYS = ['path'];

/** A Standard Schema for `[sandbox.bwrap]` (no schema library: this package depends on @ux/protocol only). */
export const bwrapSettingsSchema: SettingsSchema<BwrapPluginSettings> = {
  '~standard': {
    version: 1,
    vendor: 'ux',
    validate(value): SettingsValidation<BwrapPluginSettings> {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return { issues: [{ message: 'must be a table' }] };
      const table = value as Record<string, unknown>;
      const issues = Object.keys(table)
        .filter((key) => !KEYS.includes(key))
        .map((key) => ({
          message: `unknown key ${key}${didYouMean(key, KEYS)}; known keys: ${KEYS.join(', ')}`,
          path: [key],
        }));
      if (table.path !== undefined && (typeof table.path !== 'string' || !isAbsolutePath(table.path)))
        issues.push({
          message: `path must be the absolute path of the bwrap binary, got ${JSON.stringify(table.path)}`,
          path: ['path'],
        });
      if (issues.length > 0) return { issues };
      return { value: table.path === undefined ? {} : { path: table.path as string } };
    },
  },
};

/**
 * The bubblewrap backend as a sandbox plugin: what `ux` loads (shipped, through the same loader as a
 * plugin named in `sandbox_plugins`). `[sandbox.bwrap] path` chooses the binary; the host's cache
 * directory keeps the probe's result, its quarantine directory receives protected paths a command created.
 */
export const sandboxPlugin: SandboxPlugin<BwrapPluginSettings> = {
  specificationVersion: SANDBOX_SPECIFICATION_VERSION,
  id: 'bwrap',
  platforms: ['linux'],
  description: 'bubblewrap: Linux namespaces, a seccomp filter and a path guard',
  settings: bwrapSettingsSchema,
  // Loaded on first use: a host lists the backend without evaluating its code.
  create: async (settings, host) =>
    (await import('./create-bwrap-sandbox.js')).createBwrapSandbox({
      ...(settings.path ? { bwrapPath: settings.path } : {}),
      ...(host.cacheDir ? { probeCacheFile: join(host.cacheDir, 'bwrap-probe.json') } : {}),
      ...(host.quarantineDir ? { quarantineDir: host.quarantineDir } : {}),
    }),
};

export default sandboxPlugin;
