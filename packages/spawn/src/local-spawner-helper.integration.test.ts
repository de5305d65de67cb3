import { describeConformance, spawnerConformanceChecks } from '@ux/protocol-testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, expect, it } from 'vitest';
import { createLocalSpawner } from './local-spawner.js';

// Every child through the helper: the path a host with inherited descriptors (and every PTY) takes.
const spawner = createLocalSpawner({ fdHygiene: 'always' });

// Start the host reaper before the leak check's baseline: it lives as long as the host, by design.
beforeAll(() => warmUpSpawner(spawner));
useLeakCheck();

it('routes pipe children through the helper', () => {
  expect(spawner.pipesThroughHelper).toBe(true);
  expect(spawner.reaperPid).toBeGreaterThan(0);
});

describeConformance(
  'local spawner through the helper',
  spawnerConformanceChecks(() => spawner),
);
