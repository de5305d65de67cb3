import { SANDBOX_SPECIFICATION_VERSION, type SandboxBackend } from './sandbox-backend.js';

/**
 * The smallest part of the Standard Schema interface (https://standardschema.dev) a plugin's settings
 * schema must offer: zod 4, valibot and arktype schemas all do, so a plugin validates its own
 * `[sandbox.<id>]` table with whatever library it likes and the host never imports it.
 */
export interface SettingsSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): SettingsValidation<Output> | Promise<SettingsValidation<Output>>;
  };
}

export type SettingsValidation<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
      }>;
    };

/** What the host hands every backend it creates. */
export interface SandboxHostContext {
  /** Where the backend may remember what its probes learned (owner-only, out of every sandbox's reach). */
  cacheDir?: string;
  /** Where protected paths a command created are moved; absent: removed. */
  quarantineDir?: string;
}

/**
 * What a package or file named in `sandbox_plugins` exports, as its default export or as
 * `sandboxPlugin`: the backend's identity, its settings schema and a factory. The shipped backends
 * export one too, and load the same way. Loading a plugin module must have no side effect.
 */
export interface SandboxPlugin<Settings = Record<string, unknown>> {
  readonly specificationVersion: typeof SANDBOX_SPECIFICATION_VERSION;
  /** The backend id (`[a-z][a-z0-9-]*`), the key of its `[sandbox.<id>]` table and of `sandbox_backends`. */
  readonly id: string;
  /** `process.platform` values it runs on; on others it is listed but never created. */
  readonly platforms: readonly NodeJS.Platform[];
  /** One line for `ux doctor`: what it is. */
  readonly description?: string;
  /** Validates `[sandbox.<id>]` (an empty table when the config has none). Absent: the table must be empty. */
  readonly settings?: SettingsSchema<Settings>;
  /** Creates the backend; must not spawn or touch the file system until probed or asked for a plan. */
  create(settings: Settings, host: SandboxHostContext): SandboxBackend | Promise<SandboxBackend>;
}

/** Names what is wrong with a value exported as a sandbox plugin, or undefined when it is one. */
export function sandboxPluginProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null)
    return 'it exports no sandbox plugin object (default export or `sandboxPlugin`)';
  const plugin = value as Partial<SandboxPlugin>;
  if (plugin.specificationVersion !== SANDBOX_SPECIFICATION_VERSION)
    return `it speaks ${JSON.stringify(plugin.specificationVersion)}, ux speaks "${SANDBOX_SPECIFICATION_VERSION}"`;
  if (typeof plugin.id !== 'string' || !/^[a-z][a-z0-9-]*$/.test(plugin.id))
    return `its id ${JSON.stringify(plugin.id)} is not a lowercase name ([a-z][a-z0-9-]*)`;
  if (!Array.isArray(plugin.platforms) || plugin.platforms.some((p) => typeof p !== 'string'))
    return 'its platforms are not a list of process.platform names';
  if (typeof plugin.create !== 'function') return 'it has no create(settings, host) function';
  if (plugin.settings !== undefined && typeof plugin.settings?.['~standard']?.validate !== 'function')
    return 'its settings schema is not a Standard Schema (no ~standard.validate)';
  return undefined;
}
