import { SANDBOX_SPECIFICATION_VERSION, type SandboxPlugin } from '@ux/protocol/core';

/**
 * The Seatbelt backend as a sandbox plugin: what `ux` loads (shipped, through the same loader as a
 * plugin named in `sandbox_plugins`). It takes no settings (`[sandbox.seatbelt]` must be empty). This
 * module is small on purpose (the `@ux/sandbox-seatbelt/plugin` export): a host on another platform
 * lists the backend without parsing its code, which `create` loads through the package's own name.
 */
// Through the package's own name, not a relative path: a host that bundles this module (the ux CLI)
// leaves the rest of the package out of its bundle and loads it from the package only when created.
const SELF = '@ux/sandbox-seatbelt';

export const sandboxPlugin: SandboxPlugin<Record<string, never>> = {
  specificationVersion: SANDBOX_SPECIFICATION_VERSION,
  id: 'seatbelt',
  platforms: ['darwin'],
  description: 'macOS Seatbelt: sandbox-exec with a generated SBPL profile',
  create: async () =>
    ((await import(SELF)) as typeof import('./seatbelt-sandbox.js')).createSeatbeltSandbox(),
};

export default sandboxPlugin;
