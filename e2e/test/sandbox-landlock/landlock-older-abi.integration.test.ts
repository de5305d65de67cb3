// What older kernels enforce, checked on this one: the backend told to use no right newer than ABI 4
// (Ubuntu 24.04's 6.8) and ABI 3 (6.2–6.6) declares less and must hold what it declares, with the
// protocol's suite (signals included) run for real at each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { createLandlockSandbox } from '@ux/sandbox-landlock';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What ABI 3 and later enforce (the probe adds nothing above ABI 3; see the README).
const LANDLOCK_ABI3_ENFORCES = [
  'write_limits',
  'protected_names',
  'read_deny',
  'network_off',
  'private_tmp',
] as const;

const planCwd = mkdtempSync(join(tmpdir(), 'ux-landlock-older-'));
const spawner = createLocalSpawner();
const abi4 = createLandlockSandbox({ maxAbi: 4 });
const abi3 = createLandlockSandbox({ maxAbi: 3 });
const abi2 = createLandlockSandbox({ maxAbi: 2 });
beforeAll(() => warmUpSpawner(spawner));
useLeakCheck();
afterAll(async () => {
  for (const backend of [abi4, abi3, abi2]) await backend.close();
  rmSync(planCwd, { recursive: true, force: true });
});

describe('declarations by ABI', () => {
  it('declares what each ABI holds, and plans for it', async () => {
    const probe = async (backend: typeof abi4) => {
      const result = await backend.probe();
      if (!result.available) throw new Error(result.reason);
      return result;
    };
    expect((await probe(abi4)).version).toBe('Landlock ABI 4');
    expect((await probe(abi3)).enforces).toContain('write_limits');
    expect((await probe(abi2)).enforces).toEqual(['read_deny', 'network_off']);
    const plan = await abi4.plan({
      argv: ['/bin/true'],
      cwd: planCwd,
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
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
    });
    expect(plan.argv.slice(1, 5)).toEqual(['--min-abi', '4', '--max-abi', '4']);
    expect(plan.argv).toContain('--net-off');
    expect(plan.argv).not.toContain('--scope');
    await plan.cleanup?.();
  });
});

describeConformance(
  'landlock (ABI 4)',
  sandboxBackendConformanceChecks(() => abi4, {
    run: true,
    spawner,
    planCwd,
    expectEnforces: LANDLOCK_ABI3_ENFORCES,
  }),
);
describeConformance(
  'landlock (ABI 3)',
  sandboxBackendConformanceChecks(() => abi3, {
    run: true,
    spawner,
    planCwd,
    expectEnforces: LANDLOCK_ABI3_ENFORCES,
  }),
);
