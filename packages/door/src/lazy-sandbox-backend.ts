import {
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxHostContext,
  type SandboxPlugin,
} from '@ux/protocol/core';

export interface LazySandboxBackendOptions {
  /** The plugin's checked settings (a promise when its schema answers asynchronously); default `{}`. */
  settings?: unknown;
  /** Where its backend may keep probe results and quarantined paths. */
  host?: SandboxHostContext;
  /** Where the plugin came from, for messages (`shipped with ux (@ux/sandbox-bwrap)`). */
  source?: string;
  /** What to check when the backend cannot be created; default "check <source>". */
  fix?: string;
}

/**
 * A plugin's backend, created on first use (a probe or a plan): listing a backend evaluates none of
 * its code, and one that cannot be created answers its probe with why, instead of throwing. The
 * created backend must have the plugin's id and speak this protocol. `close` closes it once it
 * exists (waiting for a creation under way).
 */
export function lazySandboxBackend(
  plugin: SandboxPlugin<unknown>,
  options: LazySandboxBackendOptions = {},
): SandboxBackend {
  const source = options.source ?? `sandbox plugin "${plugin.id}"`;
  let created: SandboxBackend | undefined;
  let creating: Promise<SandboxBackend> | undefined;
  const backend = () => {
    creating ??= (async () => {
      const made = await plugin.create(await (options.settings ?? {}), options.host ?? {});
      if (made?.id !== plugin.id || made.specificationVersion !== SANDBOX_SPECIFICATION_VERSION)
        throw new Error(
          `sandbox plugin ${source} created a backend with id ${JSON.stringify(made?.id)} speaking ${JSON.stringify(made?.specificationVersion)}; expected "${plugin.id}" speaking "${SANDBOX_SPECIFICATION_VERSION}"`,
        );
      created = made;
      return made;
    })();
    return creating;
  };
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: plugin.id,
    platforms: plugin.platforms,
    probe: async () => {
      try {
        return await (await backend()).probe();
      } catch (error) {
        return {
          available: false,
          reason: `the ${plugin.id} backend could not be created: ${(error as Error).message}`,
          fix: options.fix ?? `check ${source}`,
        };
      }
    },
    plan: async (request) => (await backend()).plan(request),
    // Denials are classified after a plan ran, so by then the backend exists.
    classifyDenial: (evidence) => created?.classifyDenial?.(evidence) ?? 'unknown',
    close: async () => {
      if (creating) await (await creating.catch(() => undefined))?.close?.();
    },
  };
}
