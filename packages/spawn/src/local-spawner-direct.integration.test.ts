import { closeSync } from 'node:fs';
import { describeConformance, spawnerConformanceChecks } from '@ux/protocol-testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, expect, it } from 'vitest';
import { inheritableFds } from './inheritable-fds.js';
import { createLocalSpawner } from './local-spawner.js';

// The fast path: a host without inheritable descriptors starts pipe children directly. This worker may
// have inherited some from whatever started the test run; closing its copies makes it such a host.
for (const fd of inheritableFds() ?? []) closeSync(fd);
const spawner = createLocalSpawner();

beforeAll(() => warmUpSpawner(spawner));
useLeakCheck();

it('starts pipe children directly when nothing would leak', () => {
  expect(inheritableFds()).toEqual([]);
  expect(spawner.pipesThroughHelper).toBe(false);
});

describeConformance(
  'local spawner, direct pipes',
  spawnerConformanceChecks(() => spawner),
);
