// The sandbox backend conformance suite run for real (Linux): its runtime checks start processes
// under planners that break the contract, and must catch each break.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { SandboxBackend, SandboxPlanRequest } from '@ux/protocol/core';
import { SANDBOX_CAPABILITIES, type SandboxCapability } from '@ux/protocol/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConformanceOutcome, runConformanceChecks } from '../src/conformance-check.js';
import { descendantPids } from '../src/process-helpers.js';
import { sandboxBackendConformanceChecks } from '../src/sandbox-backend-conformance.js';
import { fakeBackend } from './fake-backend.js';
import { TOY_BWRAP_ENFORCES, type ToyBwrapPart, toyBwrapBackend } from './toy-bwrap-backend.js';

function byName(outcomes: ConformanceOutcome[]): Record<string, ConformanceOutcome['status']> {
  return Object.fromEntries(outcomes.map((outcome) => [outcome.name, outcome.status]));
}

describe('sandbox backend conformance suite, run', () => {
  it.runIf(process.platform === 'linux')(
    'fails an in-memory backend that claims enforcement but restricts nothing',
    async () => {
      const outcomes = byName(
        await runConformanceChecks(
          sandboxBackendConformanceChecks(
            () =>
              fakeBackend({
                available: true,
                probe: async () => ({ available: true, enforces: SANDBOX_CAPABILITIES }),
              }),
            { run: true },
          ),
        ),
      );
      expect(outcomes).toMatchObject({
        'runs a planned command and passes its output through': 'passed',
        'allows writes inside the working directory under workspace-write': 'passed',
        'write_limits: blocks writes outside the writable roots': 'failed',
        'write_limits: blocks writes in the working directory under read-only': 'failed',
        'read_deny: hides a deny-read path from reads': 'failed',
        'network_off: blocks TCP to a host listener when the network is restricted, and allows it when enabled':
          'failed',
      });
    },
  );

  it.runIf(process.platform === 'linux')(
    'skips the checks of what a backend does not declare, with the reason, and checks keepFds always',
    async () => {
      const outcomes = await runConformanceChecks(
        sandboxBackendConformanceChecks(() => fakeBackend({ available: true }), { run: true }),
      );
      const capabilityChecks = outcomes.filter(
        (o) => /^[a-z_]+: /.test(o.name) && !o.name.startsWith('signals'),
      );
      expect(capabilityChecks.length).toBeGreaterThan(10);
      for (const outcome of capabilityChecks) {
        expect(outcome.status).toBe('skipped');
        expect(outcome.reason).toMatch(/^the probe does not declare [a-z_]+ in enforces$/);
      }
      expect(
        byName(outcomes)[
          'keepFds: a descriptor named in keepFds reaches the command, open as the host left it'
        ],
      ).toBe('passed');
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

// The toy: bubblewrap without protected paths, path guard or seccomp filter (toy-bwrap-backend.ts).
const hasBwrap =
  process.platform === 'linux' && spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0;

describe('sandbox backend conformance suite, a toy bubblewrap backend (needs bwrap on Linux)', () => {
  // No leak check from @ux/test-utils here (it depends on this package): what the suite and the toy
  // start (bwrap, its commands, the network client, the host's sleep) must be gone after each run.
  afterEach(() => {
    const left = descendantPids(process.pid).filter((pid) => {
      try {
        return /bwrap|sleep|ux-conformance/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  });
  const outcomesOf = async (
    enforces: readonly SandboxCapability[],
    without: readonly ToyBwrapPart[] = [],
  ) => {
    const backend = toyBwrapBackend(enforces, without);
    try {
      return await runConformanceChecks(sandboxBackendConformanceChecks(() => backend, { run: true }));
    } finally {
      await backend.close();
    }
  };

  it.runIf(hasBwrap)(
    'declaring everything, it fails: protected names, host unix sockets, unix socket control and the proxy are not enforced',
    async () => {
      const outcomes = await outcomesOf(SANDBOX_CAPABILITIES);
      expect(outcomes.filter((o) => o.status === 'failed').map((o) => o.name)).toEqual([
        'protected_names: an existing .git config, hooks and .ux inside a writable root stay read-only (or the plan refuses)',
        "protected_names: ux's own state inside a writable root (hostState.readOnly) stays read-only (or the plan refuses)",
        'protected_names: what a command plants in a .git or .ux it creates inside a writable root does not survive',
        'network_off: blocks connecting to a unix socket of the host (a path) when the network is restricted',
        'unix_socket_control: allowUnixSockets reaches the listed host socket and no other',
        "network_by_domain: under a proxied network the host's proxy is reachable through the proxy variables, and nothing else",
      ]);
      // What it does hold passes under the same lie.
      expect(byName(outcomes)).toMatchObject({
        'write_limits: blocks writes outside the writable roots': 'passed',
        'read_deny: hides a deny-read path from reads': 'passed',
        'network_off: blocks TCP to a host listener when the network is restricted, and allows it when enabled':
          'passed',
        "private_tmp: /tmp and $TMPDIR are the session's own: the host's cannot be read, what is written stays inside and is shared by its commands":
          'passed',
      });
    },
    180_000,
  );

  it.runIf(hasBwrap)(
    'declaring honestly (write_limits, read_deny, private_tmp, process_isolation), it passes',
    async () => {
      const outcomes = await outcomesOf(TOY_BWRAP_ENFORCES);
      expect(outcomes.filter((o) => o.status === 'failed').map((o) => [o.name, String(o.error)])).toEqual([]);
      const statuses = byName(outcomes);
      for (const capability of TOY_BWRAP_ENFORCES) {
        const own = Object.entries(statuses).filter(([name]) => name.startsWith(`${capability}: `));
        expect(own.length).toBeGreaterThan(0);
        expect(own.every(([, status]) => status === 'passed')).toBe(true);
      }
      expect(
        statuses[
          'protected_names: what a command plants in a .git or .ux it creates inside a writable root does not survive'
        ],
      ).toBe('skipped');
    },
    180_000,
  );

  // Each part the toy leaves out, with the capability that part holds declared: that capability's checks
  // fail, and only they.
  it.runIf(hasBwrap).each<[ToyBwrapPart, SandboxCapability, string[]]>([
    [
      'read-only root',
      'write_limits',
      [
        'write_limits: blocks writes outside the writable roots',
        'write_limits: blocks writes through a symlink in the workspace that leads outside',
        'write_limits: blocks writes in the working directory under read-only',
      ],
    ],
    [
      'masks',
      'read_deny',
      [
        'read_deny: hides a deny-read path from reads',
        "read_deny: hides ux's hidden directories (hostState.hidden)",
        'read_deny: a deny-read path inside a writable root is unreadable (or the plan refuses)',
      ],
    ],
    [
      'private tmp',
      'private_tmp',
      [
        "private_tmp: /tmp and $TMPDIR are the session's own: the host's cannot be read, what is written stays inside and is shared by its commands",
      ],
    ],
    [
      'pid namespace',
      'process_isolation',
      ['process_isolation: host processes cannot be seen or signalled from inside'],
    ],
    [
      'network namespace',
      'network_off',
      [
        'network_off: blocks TCP to a host listener when the network is restricted, and allows it when enabled',
        'network_off: blocks UDP to a host socket when the network is restricted',
        'network_off: blocks connecting to a unix socket of the host (a path) when the network is restricted',
        'network_off: blocks connecting to an abstract unix socket of the host when the network is restricted',
      ],
    ],
  ])(
    'without its %s, declaring %s, it fails exactly those checks',
    async (part, capability, expected) => {
      const outcomes = await outcomesOf([...new Set([...TOY_BWRAP_ENFORCES, capability])], [part]);
      expect(outcomes.filter((o) => o.status === 'failed').map((o) => o.name)).toEqual(expected);
    },
    120_000,
  );
});

describe('sandbox backend conformance suite, keepFds', () => {
  it.runIf(process.platform === 'linux')(
    'fails a backend whose wrapper closes the descriptor named in keepFds',
    async () => {
      const closes = fakeBackend({
        available: true,
        plan: async (r: SandboxPlanRequest) => {
          const plan = await fakeBackend().plan(r);
          const fds = (r.keepFds ?? []).map((fd) => `exec ${fd}>&-;`).join(' ');
          return { ...plan, argv: ['bash', '-c', `${fds} exec "$@"`, 'wrapper', ...plan.argv] };
        },
      });
      const [outcome] = await runConformanceChecks(
        sandboxBackendConformanceChecks(() => closes, { run: true }).filter((c) =>
          c.name.startsWith('keepFds:'),
        ),
      );
      expect(outcome?.status).toBe('failed');
      expect(String(outcome?.error)).toContain('EBADF');
    },
  );
});
