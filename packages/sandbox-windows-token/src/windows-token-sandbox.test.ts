import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { describe, expect, it } from 'vitest';
import { win32MemoryFsView } from './win32-memory-fs-view.js';
import { createWindowsTokenSandbox } from './windows-token-sandbox.js';

// The real backend, as a user would create it. Off Windows the runtime checks report as skipped with the
// probe's reason. On Windows they run for real with Git for Windows' sh; the network check there is
// expected to fail, because this backend's network block is advisory (see the README).
describeConformance(
  'windows-token (SandboxBackend conformance)',
  sandboxBackendConformanceChecks(() => createWindowsTokenSandbox(), {
    run: 'auto',
    ...(process.platform === 'win32'
      ? { shell: process.env.UX_WINDOWS_SH ?? 'C:\\Program Files\\Git\\bin\\sh.exe' }
      : {}),
  }),
);

describe('createWindowsTokenSandbox', () => {
  it('answers the probe off Windows with "not on this platform" and a fix', async () => {
    const probe = await createWindowsTokenSandbox({
      probeHost: {
        platform: 'darwin',
        exists: () => true,
        osRelease: () => '',
        loadApi: async () => Promise.reject(new Error('unused')),
      },
    }).probe();
    expect(probe).toMatchObject({
      available: false,
      reason: 'not on this platform (the restricted-token sandbox needs Windows; this is darwin)',
    });
  });

  it('plans through the launcher with the settings it was given', async () => {
    const backend = createWindowsTokenSandbox({
      fs: win32MemoryFsView({ 'C:\\w\\': '' }),
      nodePath: 'C:\\node\\node.exe',
      launcherPath: 'C:\\ux\\windows-token-launcher.js',
      sandboxId: 'ci',
      persistGrants: false,
    });
    const plan = await backend.plan({
      argv: ['cmd.exe'],
      cwd: 'C:\\w',
      env: {},
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
      tty: false,
    });
    expect(plan.argv.slice(0, 3)).toEqual([
      'C:\\node\\node.exe',
      'C:\\ux\\windows-token-launcher.js',
      '--plan',
    ]);
    expect(plan.sandboxType).toBe('windows-token');
    expect(plan.cleanup).toBeUndefined();
    const spec = JSON.parse(Buffer.from(plan.argv[3]!, 'base64url').toString());
    expect(spec.sandboxId).toBe('ci');
    expect(spec.aces[0]).toMatchObject({ path: 'C:\\w', trustee: 'run', undo: 'after-run' });
  });

  it('rejects (not throws) a plan it cannot make', async () => {
    const plan = createWindowsTokenSandbox({ fs: win32MemoryFsView({}) }).plan({
      argv: [],
      cwd: 'C:\\w',
      env: {},
      policy: { fileSystem: { kind: 'unrestricted' }, network: 'enabled' },
      tty: false,
    });
    await expect(plan).rejects.toMatchObject({ code: 'missing_command_line' });
  });

  it('rejects a proxied network as unavailable on Windows', async () => {
    const plan = createWindowsTokenSandbox({ fs: win32MemoryFsView({}) }).plan({
      argv: ['cmd.exe'],
      cwd: 'C:\\w',
      env: {},
      policy: {
        fileSystem: { kind: 'unrestricted' },
        network: 'proxied',
        networkProxy: { unixSocket: 'C:\\ux\\proxy.sock', loopbackPort: 43128 },
      },
      tty: false,
    });
    await expect(plan).rejects.toMatchObject({
      code: 'sandbox_unavailable',
      backend: 'windows-token',
      reason: expect.stringContaining('not supported on Windows yet'),
    });
  });
});
