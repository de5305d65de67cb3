import type { SandboxRegistry } from '@ux/protocol-utils';

/**
 * Closes every backend of a registry its host made (the bwrap backend's path guard, runtime files and
 * private /tmp; Landlock's launcher files). A backend that fails to close does not stop the others.
 */
export async function closeSandboxRegistry(registry: SandboxRegistry | undefined): Promise<void> {
  if (!registry) return;
  await Promise.all(
    registry.ids.map((id) =>
      registry
        .get(id)
        .close?.()
        .catch(() => undefined),
    ),
  );
}
