import { describe, expect, it } from 'vitest';
import { probeSeatbelt, type SeatbeltProbeHost } from './probe-seatbelt.js';

function host(
  overrides: Partial<SeatbeltProbeHost> = {},
  trial = { exitCode: 0 as number | null, output: '' },
) {
  const runs: string[][] = [];
  const value: SeatbeltProbeHost = {
    platform: 'darwin',
    env: {},
    exists: () => true,
    run: async (file, args) => {
      runs.push([file, ...args]);
      return trial;
    },
    osRelease: () => '24.1.0',
    ...overrides,
  };
  return { value, runs };
}

describe('probeSeatbelt', () => {
  it('answers "not on this platform" off macOS without running anything', async () => {
    const { value, runs } = host({ platform: 'linux' });
    expect(await probeSeatbelt(value)).toEqual({
      available: false,
      reason: 'not on this platform (Seatbelt needs macOS; this is linux)',
      fix: 'use @ux/sandbox-bwrap on Linux or @ux/sandbox-windows-token on Windows',
    });
    expect(runs).toEqual([]);
  });

  it('is available when a trivial profile applies', async () => {
    const { value, runs } = host();
    expect(await probeSeatbelt(value)).toEqual({
      available: true,
      version: 'macOS kernel 24.1.0',
      details: { executable: '/usr/bin/sandbox-exec' },
      // Everything but process isolation and resource limits (the README's list).
      enforces: [
        'write_limits',
        'protected_names',
        'read_deny',
        'network_off',
        'network_by_domain',
        'unix_socket_control',
        'private_tmp',
      ],
    });
    expect(runs).toEqual([
      ['/usr/bin/sandbox-exec', '-p', '(version 1)(allow default)', '--', '/usr/bin/true'],
    ]);
  });

  it('detects an outer sandbox by marker and by the nesting error', async () => {
    expect(await probeSeatbelt(host({ env: { CODEX_SANDBOX: 'seatbelt' } }).value)).toMatchObject({
      available: false,
      reason: expect.stringContaining('already inside a sandbox (CODEX_SANDBOX=seatbelt)'),
    });
    const nested = host(
      {},
      { exitCode: 71, output: 'sandbox-exec: sandbox_apply: Operation not permitted\n' },
    );
    expect(await probeSeatbelt(nested.value)).toMatchObject({
      available: false,
      reason: 'already inside a sandbox: sandbox-exec: sandbox_apply: Operation not permitted',
    });
  });

  it('reports a missing sandbox-exec and any other failure with a fix', async () => {
    expect(await probeSeatbelt(host({ exists: () => false }).value)).toMatchObject({
      available: false,
      reason: '/usr/bin/sandbox-exec is missing',
    });
    const broken = await probeSeatbelt(host({}, { exitCode: null, output: '' }).value);
    expect(broken).toMatchObject({ available: false, reason: expect.stringContaining('exit killed') });
    expect(broken.available === false && broken.fix.length).toBeGreaterThan(0);
  });
});
