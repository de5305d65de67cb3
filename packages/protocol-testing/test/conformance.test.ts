import type { SandboxCapability, SandboxPlanRequest } from '@ux/protocol/core';
import {
  type ExecProcess,
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  type Reviewer,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  StdinClosedError,
} from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { type ConformanceOutcome, runConformanceChecks } from '../src/conformance-check.js';
import { reviewerConformanceChecks } from '../src/reviewer-conformance.js';
import { sandboxBackendConformanceChecks } from '../src/sandbox-backend-conformance.js';
import { spawnerConformanceChecks } from '../src/spawner-conformance.js';
import { fakeBackend } from './fake-backend.js';

function byName(outcomes: ConformanceOutcome[]): Record<string, ConformanceOutcome['status']> {
  return Object.fromEntries(outcomes.map((outcome) => [outcome.name, outcome.status]));
}

function failed(outcomes: ConformanceOutcome[]): string[] {
  return outcomes.filter((outcome) => outcome.status === 'failed').map((outcome) => outcome.name);
}

describe('sandbox backend conformance suite', () => {
  it('passes a contract-following planner and skips runtime checks where it cannot run, with the reason', async () => {
    const outcomes = await runConformanceChecks(sandboxBackendConformanceChecks(() => fakeBackend()));
    expect(failed(outcomes)).toEqual([]);
    const skipped = outcomes.filter((outcome) => outcome.status === 'skipped');
    // Two runs, 19 capability checks (one Linux only), keepFds, four signal checks.
    const runtime = process.platform === 'linux' ? 25 : 24;
    expect(skipped.length).toBe(runtime);
    expect(skipped.every((outcome) => outcome.reason === 'fake backend (none needed)')).toBe(true);
  });

  it('fails runtime checks when they are demanded and the backend cannot run', async () => {
    const outcomes = await runConformanceChecks(
      sandboxBackendConformanceChecks(() => fakeBackend(), { run: true }),
    );
    expect(failed(outcomes)).toHaveLength(process.platform === 'linux' ? 25 : 24);
    expect(String(outcomes.find((o) => o.status === 'failed')?.error)).toContain(
      'the backend cannot run here: fake backend',
    );
  });

  it.each([
    [
      'drops an environment variable',
      {
        plan: async (r: SandboxPlanRequest) => ({
          ...(await fakeBackend().plan(r)),
          env: { PATH: r.env.PATH ?? '' },
        }),
      },
      'keeps every variable of the computed environment (adds, never drops or changes)',
    ],
    [
      'modifies the request',
      {
        plan: async (r: SandboxPlanRequest) => {
          (r.argv as string[]).push('--extra');
          return fakeBackend().plan(r);
        },
      },
      'does not modify the request it is given',
    ],
    [
      'plans an empty argv',
      {
        plan: async (r: SandboxPlanRequest) =>
          fakeBackend().plan({ ...r, argv: r.argv.length ? r.argv : ['true'] }),
      },
      'rejects an empty argv with MissingCommandLineError',
    ],
    [
      'reports another sandbox type',
      {
        plan: async (r: SandboxPlanRequest) => ({
          ...(await fakeBackend().plan(r)),
          sandboxType: 'something-else',
        }),
      },
      'plans a command into a well-formed launch plan',
    ],
    [
      'is unavailable without saying how to fix it',
      { probe: async () => ({ available: false as const, reason: 'missing', fix: '' }) },
      'probe() resolves with availability, or a reason and a fix',
    ],
    [
      'calls a clean exit a denial',
      { classifyDenial: () => 'denied' as const },
      'classifyDenial(), when offered, answers for any evidence and never calls exit 0 a denial',
    ],
    ['has an uppercase id', { id: 'Fake' }, 'declares ux-sandbox-v1, an id and its platforms'],
    [
      'declares a capability that does not exist',
      {
        probe: async () => ({
          available: true as const,
          enforces: ['write_limits', 'teleportation'] as unknown as SandboxCapability[],
        }),
      },
      'probe() declares in enforces only known capabilities, each once',
    ],
    [
      'declares a capability twice',
      { probe: async () => ({ available: true as const, enforces: ['read_deny', 'read_deny'] as const }) },
      'probe() declares in enforces only known capabilities, each once',
    ],
  ])('fails a backend that %s', async (_, overrides, check) => {
    const outcomes = byName(
      await runConformanceChecks(
        sandboxBackendConformanceChecks(() => fakeBackend(overrides), { run: false }),
      ),
    );
    expect(outcomes[check]).toBe('failed');
  });

  // Only the declaration check runs (the others would start processes).
  const expectation = async (enforces: readonly SandboxCapability[]) =>
    runConformanceChecks(
      sandboxBackendConformanceChecks(
        () => fakeBackend({ probe: async () => ({ available: true, enforces }) }),
        { run: true, expectEnforces: ['write_limits', 'network_off'] },
      ).filter((c) => c.name === 'probe() declares in enforces at least what the test expects'),
    );

  it('fails a backend whose probe declares less than the test expects, naming what is missing', async () => {
    const [outcome] = await expectation(['write_limits']);
    expect(outcome?.status).toBe('failed');
    expect(String(outcome?.error)).toContain('lacks network_off (it declares write_limits)');
  });

  it('passes a backend whose probe declares what the test expects, and more', async () => {
    const [outcome] = await expectation(['network_off', 'write_limits', 'read_deny']);
    expect(outcome?.status).toBe('passed');
  });
});

/** An in-memory spawner that pretends every command prints its argv and exits 0. */
function fakeSpawner(): Spawner {
  return {
    specificationVersion: SPAWNER_SPECIFICATION_VERSION,
    id: 'fake',
    async spawn(request) {
      const listeners = new Set<(chunk: Uint8Array) => void>();
      const text = new TextEncoder().encode(request.argv.join(' '));
      let delivered = false;
      const process: ExecProcess = {
        pid: undefined,
        tty: request.tty,
        onOutput(listener) {
          listeners.add(listener);
          if (!delivered) {
            delivered = true;
            listener(text);
          }
          return () => listeners.delete(listener);
        },
        write: async () => {
          if (request.stdin === 'closed' && !request.tty) throw new StdinClosedError({ reason: 'no_stdin' });
        },
        interrupt: async () => {},
        terminate: async () => {},
        exited: Promise.resolve({ exitCode: 0 }),
        closed: Promise.resolve(),
        exitStatus: () => ({ exitCode: 0 }),
      };
      return process;
    },
  };
}

describe('spawner conformance suite', () => {
  it('fails an in-memory spawner that does not run anything', async () => {
    const outcomes = byName(
      await runConformanceChecks(spawnerConformanceChecks(fakeSpawner, { timeoutMs: 200 })),
    );
    expect(outcomes).toMatchObject({
      'declares ux-spawner-v1 and an id': 'passed',
      'refuses writes to a process without stdin with StdinClosedError': 'passed',
      'runs a command and reports its output and exit code 0': 'failed',
      'reports a non-zero exit code as a result': 'failed',
      'reports a signal death as 128 + the signal number': 'failed',
      'passes exactly the given environment, nothing inherited': 'failed',
      'exitStatus() is undefined while the process runs': 'failed',
      'rejects an empty argv with MissingCommandLineError': 'failed',
      'rejects a program that does not exist with SpawnFailedError naming it': 'failed',
      'a PTY is 24 rows by 80 columns by default': 'failed',
    });
  });

  it('fails a spawner with another specification version', async () => {
    const outcomes = byName(
      await runConformanceChecks(
        spawnerConformanceChecks(
          () => ({ ...fakeSpawner(), specificationVersion: 'v0' }) as unknown as Spawner,
          { timeoutMs: 200 },
        ),
      ),
    );
    expect(outcomes['declares ux-spawner-v1 and an id']).toBe('failed');
  });

  it('skips PTY checks, with a reason, for a spawner without PTYs', async () => {
    const outcomes = await runConformanceChecks(
      spawnerConformanceChecks(fakeSpawner, { tty: false, timeoutMs: 200 }),
    );
    const pty = outcomes.filter((outcome) => outcome.name.includes('PTY'));
    expect(pty.length).toBeGreaterThan(0);
    expect(
      pty.every(
        (outcome) => outcome.status === 'skipped' && outcome.reason === 'the spawner does not offer PTYs',
      ),
    ).toBe(true);
  });
});

describe('reviewer conformance suite', () => {
  const honest: Reviewer = {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'honest',
    review: async (_request, { signal }) => (signal.aborted ? { type: 'abort' } : { type: 'approved' }),
  };

  it('passes a reviewer that answers within the choices and honours abort', async () => {
    expect(failed(await runConformanceChecks(reviewerConformanceChecks(() => honest)))).toEqual([]);
  });

  it('fails a reviewer that answers outside the choices and ignores abort', async () => {
    const pushy: Reviewer = { ...honest, review: async () => ({ type: 'approved_for_session' }) };
    expect(failed(await runConformanceChecks(reviewerConformanceChecks(() => pushy)))).toEqual([
      'answers with a well-formed decision among the available ones (or says no one could be asked)',
      'answers abort when the signal is already aborted',
    ]);
  });

  it('lets a reviewer say that no one could be asked (NoReviewerError), but not fail otherwise', async () => {
    const unattended: Reviewer = {
      ...honest,
      review: async (_request, { signal }) => {
        if (signal.aborted) return { type: 'abort' };
        throw new NoReviewerError('stdin is not a terminal');
      },
    };
    expect(failed(await runConformanceChecks(reviewerConformanceChecks(() => unattended)))).toEqual([]);
    const broken: Reviewer = { ...unattended, review: async () => Promise.reject(new Error('boom')) };
    expect(failed(await runConformanceChecks(reviewerConformanceChecks(() => broken)))).toEqual([
      'answers with a well-formed decision among the available ones (or says no one could be asked)',
      'answers abort when the signal is already aborted',
    ]);
  });

  it('fails a reviewer that never answers', async () => {
    const silent: Reviewer = { ...honest, review: () => new Promise(() => {}) };
    const outcomes = await runConformanceChecks(reviewerConformanceChecks(() => silent, { timeoutMs: 50 }));
    expect(failed(outcomes)).toHaveLength(2);
    expect(String(outcomes[1]?.error)).toContain('timed out after 50 ms waiting for a decision');
  });
});
