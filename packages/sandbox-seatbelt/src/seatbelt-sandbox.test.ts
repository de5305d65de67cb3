import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { memoryFsView } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { createSeatbeltSandbox } from './seatbelt-sandbox.js';
import type { SeatbeltViolationCollector } from './seatbelt-violation-collector.js';

// The real backend, as a user would create it, except that the test runner's own environment is not
// taken for ux's (a runner inside Codex would otherwise make every plan refuse to nest; nesting has its
// own tests). Off macOS the runtime checks report as skipped with the probe's reason; on macOS they run
// sandbox-exec for real.
describeConformance(
  'seatbelt (SandboxBackend conformance)',
  sandboxBackendConformanceChecks(() => createSeatbeltSandbox({ hostEnv: {} }), { run: 'auto' }),
);

describe('createSeatbeltSandbox', () => {
  it('answers the probe off macOS with "not on this platform" and a fix', async () => {
    const probe = await createSeatbeltSandbox({
      probeHost: {
        platform: 'linux',
        env: {},
        exists: () => false,
        run: async () => ({ exitCode: 0, output: '' }),
        osRelease: () => '',
      },
    }).probe();
    expect(probe).toMatchObject({
      available: false,
      reason: expect.stringMatching(/^not on this platform \(/),
    });
  });

  it('hands each command its violations after it exited when a collector is set', async () => {
    const taken: string[] = [];
    const collector: SeatbeltViolationCollector = {
      tagPrefix: 'ux-sbx-ff',
      start: async () => {},
      newTag: () => 'ux-sbx-ff-9',
      take: async (tag) => {
        taken.push(tag);
        return [{ process: 'cat', pid: 1, operation: 'file-read-data', target: '/s', tag }];
      },
      stop: async () => {},
    };
    const received: unknown[] = [];
    const backend = createSeatbeltSandbox({
      fs: memoryFsView({ '/w/': '' }),
      hostEnv: {},
      violationCollector: collector,
      onViolations: (violations, argv) => received.push({ violations, argv }),
    });
    const plan = await backend.plan({
      argv: ['cat', '/s'],
      cwd: '/w',
      env: {},
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }],
        },
        network: 'restricted',
      },
      tty: false,
    });
    expect(plan.argv[2]).toContain('(deny default (with message "ux-sbx-ff-9"))');
    expect(taken).toEqual([]);
    await plan.cleanup?.();
    expect(taken).toEqual(['ux-sbx-ff-9']);
    expect(received).toEqual([
      { violations: [expect.objectContaining({ target: '/s' })], argv: ['cat', '/s'] },
    ]);
  });

  it('rejects (not throws) a plan it cannot make', async () => {
    const backend = createSeatbeltSandbox({ hostEnv: { CODEX_SANDBOX: 'seatbelt' } });
    const plan = backend.plan({
      argv: ['true'],
      cwd: '/tmp',
      env: {},
      policy: { fileSystem: { kind: 'unrestricted' }, network: 'enabled' },
      tty: false,
    });
    await expect(plan).rejects.toMatchObject({ code: 'sandbox_unavailable' });
  });
});
