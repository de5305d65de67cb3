import * as z from 'zod/v4';

/**
 * The `sandbox` field of `process/start`. Mind the casing: camelCase outside, snake_case keys and tags
 * inside `permissions`, kebab-case network values, exactly as Codex sends it.
 */
export const wireSpecialPathSchema = z.object({
  kind: z
    .string()
    .min(1)
    .describe('root | minimal | project_roots | tmpdir | slash_tmp; unknown kinds are kept'),
  subpath: z.string().optional(),
});

export const wireFileSystemEntrySchema = z.object({
  path: z.discriminatedUnion('type', [
    z.object({ type: z.literal('special'), value: wireSpecialPathSchema }),
    z.object({ type: z.literal('path'), path: z.string() }),
    z.object({ type: z.literal('glob_pattern'), pattern: z.string() }),
  ]),
  /** `none` is accepted as an alias of `deny`. */
  access: z.enum(['read', 'write', 'deny', 'none']),
  missing_path_behavior: z.literal('skip').optional(),
});
export type WireFileSystemEntry = z.output<typeof wireFileSystemEntrySchema>;

export const wireNetworkSchema = z.enum(['restricted', 'enabled']);

export const wirePermissionsSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('managed'),
    file_system: z.discriminatedUnion('type', [
      z.object({
        type: z.literal('restricted'),
        entries: z.array(wireFileSystemEntrySchema),
        glob_scan_max_depth: z.number().int().optional(),
      }),
      z.object({ type: z.literal('unrestricted') }),
    ]),
    network: wireNetworkSchema,
  }),
  z.object({ type: z.literal('disabled') }),
  z.object({ type: z.literal('external'), network: wireNetworkSchema }),
]);
export type WirePermissions = z.output<typeof wirePermissionsSchema>;

export const sandboxContextSchema = z.object({
  permissions: wirePermissionsSchema,
  cwd: z.string().optional(),
  workspaceRoots: z.array(z.string()).optional(),
  userHomeDir: z.string().optional(),
  temporaryDirectories: z.array(z.string()).optional(),
  windowsSandboxLevel: z.enum(['disabled', 'restricted-token', 'elevated']),
  windowsSandboxPrivateDesktop: z.boolean().optional(),
  windowsSandboxProxySettingsMode: z.enum(['reconcile', 'preserve']).optional(),
  useLegacyLandlock: z.boolean().optional(),
});
export type SandboxContext = z.output<typeof sandboxContextSchema>;

/** The sandbox a server reports it applied to a process. */
export const wireSandboxTypeSchema = z.enum([
  'none',
  'macosSeatbelt',
  'linuxSeccomp',
  'windowsRestrictedToken',
  'windowsMxc',
]);
export type WireSandboxType = z.output<typeof wireSandboxTypeSchema>;
