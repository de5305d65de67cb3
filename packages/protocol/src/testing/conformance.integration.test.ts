// The sandbox backend conformance suite run for real (Linux): its runtime checks start processes
// under planners that break the contract, and must catch each break.
import { describe, expect, it } from 'vitest';
import type { SandboxBackend, SandboxPlanRequest } from '../plugins/sandbox-backend.js';
import { type ConformanceOutcome, runConformanceChecks } from './conformance-check.js';
import { fakeBackend } from './fake-backend.js';
import { sandboxBackendConformanceChecks } from './sandbox-backend-conformance.js';

function byName(outcomes: ConformanceOutcome[]): Record<string, ConformanceOutcome['status']> {
  return Object.fromEntries(outcomes.map((outcome) => [outcome.name, outcome.status]));
}

describe('sandbox backend conformance suite, run', () => {
  it.runIf(process.platform === 'linux')(
    'fails an in-memory backend that claims enforcement but restricts nothing',
    async () => {
      const outcomes = byName(
        await runConformanceChecks(
          sandboxBackendConformanceChecks(() => fakeBackend({ available: true }), { run: true }),
        ),
      );
      expect(outcomes).toMatchObject({
        'runs a planned command and passes its output through': 'passed',
        'allows writes inside the working directory under workspace-write': 'passed',
        'blocks writes outside the writable roots': 'failed',
        'blocks writes in the working directory under read-only': 'failed',
        'hides a deny-read path from reads': 'failed',
        'blocks TCP to a host listener when the network is restricted, and allows it when enabled': 'failed',
      });
    },
  );

  it.runIf(process.platform === 'linux')(
    'fails a backend whose wrapper dies of Ctrl-C, or hides the command in another session',
    async () => {
      const signalChecks = async (backend: SandboxBackend) =>
        Object.fromEntries(
          (
            await runConformanceChecks(
              sandboxBackendConformanceChecks(() => backend, { run: true }).filter((c) =>
                c.name.startsWith('signals:'),
              ),
            )
          ).map((o) => [o.name, o.status]),
        );
      // A wrapper that waits for the command but dies of SIGINT itself (dash's default), as bwrap did.
      const dies = fakeBackend({
        available: true,
        plan: async (r: SandboxPlanRequest) => {
          const plan = await fakeBackend().plan(r);
          return { ...plan, argv: ['/bin/sh', '-c', '"$@"; exit $?', 'wrapper', ...plan.argv] };
        },
      });
      expect(await signalChecks(dies)).toMatchObject({
        'signals: SIGINT to the process group reaches the command, the wrapper survives and exits with its code':
          'failed',
        'signals: SIGTERM to the process group reaches the command and leaves the wrapper running': 'failed',
      });
      // A wrapper that moves the command into a session of its own (bwrap's --new-session).
      const hides = fakeBackend({
        available: true,
        plan: async (r: SandboxPlanRequest) => {
          const plan = await fakeBackend().plan(r);
          return { ...plan, argv: ['setsid', '--wait', ...plan.argv] };
        },
      });
      const hidden = await signalChecks(hides);
      expect(
        hidden[
          'signals: SIGINT to the process group reaches the command, the wrapper survives and exits with its code'
        ],
      ).toBe('failed');
      expect(
        hidden[
          'signals: SIGTERM then SIGKILL of the group ends every process of the sandbox, wrapper included'
        ],
      ).toBe('failed');
      // No wrapper at all passes.
      expect(Object.values(await signalChecks(fakeBackend({ available: true })))).toEqual([
        'passed',
        'passed',
        'passed',
        'passed',
      ]);
    },
    60_000,
  );
});
