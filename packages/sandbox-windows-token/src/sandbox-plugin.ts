import { SANDBOX_SPECIFICATION_VERSION, type SandboxPlugin } from '@ux/protocol/core';

/**
 * The Windows restricted-token backend as a sandbox plugin: what `ux` loads (shipped, through the same
 * loader as a plugin named in `sandbox_plugins`). It takes no settings (`[sandbox.windows-token]` must
 * be empty). This module is small on purpose (the `@ux/sandbox-windows-token/plugin` export): a host on
 * another platform lists the backend without parsing its code, which `create` loads through the
 * package's own name.
 */
// Through the package's own name, not a relative path: a host that bundles this module (the ux CLI)
// leaves the rest of the package out of its bundle and loads it from the package only when created.
const SELF = '@ux/sandbox-windows-token';

export const sandboxPlugin: SandboxPlugin<Record<string, never>> = {
  specificationVersion: SANDBOX_SPECIFICATION_VERSION,
  id: 'windows-token',
  platforms: ['win32'],
  description: 'Windows: a restricted token, ACL grants and a job object, through a Node launcher',
  create: async () =>
    ((await import(SELF)) as typeof import('./windows-token-sandbox.js')).createWindowsTokenSandbox(),
};

export default sandboxPlugin;
