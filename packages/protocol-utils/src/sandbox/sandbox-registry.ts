import {
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  UnknownPluginError,
  UxError,
} from '@ux/protocol/core';

/** The sandbox backends a host has chosen to offer, by id. */
export interface SandboxRegistry {
  /** Ids in registration order. */
  readonly ids: readonly string[];
  has(id: string): boolean;
  /** The backend with this id; throws `UnknownPluginError` listing the registered ids. */
  get(id: string): SandboxBackend;
  /** Registered backends that claim to run on `platform`, in registration order. */
  forPlatform(platform: NodeJS.Platform): SandboxBackend[];
}

/**
 * Builds a registry from backends handed in explicitly:
 * `createSandboxRegistry({ bwrap: createBwrapSandbox() })`. Each key must equal the backend's id and
 * each backend must speak `ux-sandbox-v1`.
 */
export function createSandboxRegistry(backends: Record<string, SandboxBackend>): SandboxRegistry {
  const entries = Object.entries(backends);
  for (const [key, backend] of entries) {
    if (backend?.specificationVersion !== SANDBOX_SPECIFICATION_VERSION) {
      throw new UxError(
        'invalid_arguments',
        `sandbox backend "${key}" speaks ${JSON.stringify(backend?.specificationVersion)}, expected "${SANDBOX_SPECIFICATION_VERSION}"`,
      );
    }
    if (backend.id !== key) {
      throw new UxError('invalid_arguments', `sandbox backend registered as "${key}" has id "${backend.id}"`);
    }
  }
  const byId = new Map(entries);
  const ids = entries.map(([id]) => id);
  return {
    ids,
    has: (id) => byId.has(id),
    get(id) {
      const backend = byId.get(id);
      if (!backend) throw new UnknownPluginError({ kind: 'sandbox backend', id, available: ids });
      return backend;
    },
    forPlatform: (platform) =>
      entries.map(([, backend]) => backend).filter((b) => b.platforms.includes(platform)),
  };
}
