// The escalation socket of ZshFork through real bwrap: the plan keeps the descriptor the spawn helper
// puts in place (`keepFds`), the execve wrapper inside the sandbox reaches the broker outside, and
// what it runs in place stays sandboxed while an escalated exec does not.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EffectivePolicy } from '@ux/protocol';
import { runToEnd } from '@ux/protocol-testing';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner, ESCALATION_FD } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { type EscalationBroker, type ExecHandler, startEscalationBroker } from '@ux/zsh-fork';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const local = createLocalSpawner();
const backend = createBwrapSandbox();
let root: string;
let broker: EscalationBroker;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-bwrap-keep-')));
  await warmUpSpawner(local);
});
useLeakCheck();
beforeAll(async () => {
  broker = await startEscalationBroker({ runtimeDir: join(root, 'run') });
});
afterAll(async () => {
  await backend.close();
  await broker.close();
  rmSync(root, { recursive: true, force: true });
});

function workspaceWrite(
  network: Pick<EffectivePolicy, 'network' | 'networkProxy'> = { network: 'restricted' },
): EffectivePolicy {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ],
    },
    ...network,
  };
}

async function runSandboxed(
  handler: ExecHandler,
  argv: string[],
  options: { keep?: boolean; network?: Pick<EffectivePolicy, 'network' | 'networkProxy'> } = {},
) {
  const cwd = join(root, `w-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(cwd, { recursive: true });
  const session = await broker.openSession(handler);
  onTestFinished(() => session.close());
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', ...session.env };
  const plan = await backend.plan({
    argv,
    cwd,
    env,
    policy: workspaceWrite(options.network),
    tty: false,
    ...(options.keep === false ? {} : { keepFds: [session.spawnEscalation.fd] }),
  });
  onTestFinished(() => plan.cleanup?.());
  const child = await local.spawn({
    argv: plan.argv,
    cwd: plan.cwd,
    env: plan.env,
    tty: false,
    stdin: 'closed',
    escalation: session.spawnEscalation,
  });
  onTestFinished(() => child.terminate());
  return { cwd, ...(await runToEnd(child)) };
}

describe('bwrap with an escalation socket (keepFds)', () => {
  it('Run: the wrapper inside the sandbox asks the broker, then runs the program in place, still sandboxed', async () => {
    const outside = join(root, 'outside-run');
    const seen: string[] = [];
    const { status, text } = await runSandboxed(
      (exec) => {
        seen.push(`${exec.file} ${exec.argv.slice(1).join(' ')}`);
        return { action: 'run' };
      },
      [
        broker.wrapperPath,
        '/bin/sh',
        'sh',
        '-c',
        `"$EXEC_WRAPPER" /bin/touch touch ${outside}; echo fd=$UX_ESCALATE_SOCKET`,
      ],
    );
    expect(seen).toEqual([
      `/bin/sh -c "$EXEC_WRAPPER" /bin/touch touch ${outside}; echo fd=$UX_ESCALATE_SOCKET`,
      `/bin/touch ${outside}`,
    ]);
    expect(text).toContain(`fd=${ESCALATION_FD}`);
    // touch ran in place: inside the sandbox, where the outside is read-only.
    expect(text).toMatch(/Read-only file system|Permission denied/);
    expect(existsSync(outside)).toBe(false);
    expect(status.exitCode).toBe(0);
  });

  it('Escalate: the broker runs the exec outside the sandbox, on the sandboxed command’s stdio', async () => {
    const outside = join(root, 'outside-escalated');
    const { status, text } = await runSandboxed(
      (exec) =>
        exec.file === '/bin/touch'
          ? {
              action: 'escalate',
              argv: ['/bin/sh', '-c', `touch ${outside} && echo escalated; exit 3`],
              cwd: '/',
              env: {},
            }
          : { action: 'run' },
      [broker.wrapperPath, '/bin/touch', 'touch', outside],
    );
    expect(text).toBe('escalated\n');
    expect(existsSync(outside)).toBe(true);
    expect(status.exitCode).toBe(3);
  });

  // The network-on filter refuses socket(AF_UNIX) and the proxied one every unix socket but pairs; the
  // escalation socket is inherited and the wrapper's channel is a socketpair, so both keep working.
  it.each(['enabled', 'proxied'] as const)(
    'with the network %s, the wrapper still reaches the broker',
    async (mode) => {
      let network: Pick<EffectivePolicy, 'network' | 'networkProxy'> = { network: mode };
      if (mode === 'proxied') {
        const path = join(root, 'proxy.sock');
        const server = createServer((socket) => socket.destroy());
        await new Promise<void>((resolve) => server.listen(path, resolve));
        onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
        network = { network: mode, networkProxy: { unixSocket: path } };
      }
      const seen: string[] = [];
      const { status, text } = await runSandboxed(
        (exec) => {
          seen.push(exec.file);
          return exec.file === '/bin/false'
            ? { action: 'escalate', argv: ['/bin/sh', '-c', 'echo escalated'], cwd: '/', env: {} }
            : { action: 'run' };
        },
        [broker.wrapperPath, '/bin/sh', 'sh', '-c', '"$EXEC_WRAPPER" /bin/false false; echo "in place $?"'],
        { network },
      );
      expect(seen).toEqual(['/bin/sh', '/bin/false']);
      expect(text).toBe('escalated\nin place 0\n');
      expect(status.exitCode).toBe(0);
    },
  );

  it('without keepFds the launcher closes the socket: the wrapper fails closed and nothing runs', async () => {
    const seen: string[] = [];
    const { status, text } = await runSandboxed(
      (exec) => {
        seen.push(exec.file);
        return { action: 'run' };
      },
      [broker.wrapperPath, '/bin/echo', 'echo', 'ran'],
      { keep: false },
    );
    expect(text).toMatch(/^ux-execve-wrapper: UX_ESCALATE_SOCKET=63 is not an open datagram socket/);
    expect(text).not.toContain('ran\n');
    expect(status.exitCode).toBe(1);
    expect(seen).toEqual([]);
  });
});
