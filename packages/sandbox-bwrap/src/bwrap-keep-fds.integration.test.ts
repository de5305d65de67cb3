// The escalation socket of ZshFork through real bwrap: the plan keeps the descriptor the spawn helper
// puts in place (`keepFds`), the execve wrapper inside the sandbox reaches the broker outside, and
// what it runs in place stays sandboxed while an escalated exec does not.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EffectivePolicy } from '@ux/protocol';
import { runToEnd } from '@ux/protocol/testing';
import { createLocalSpawner, ESCALATION_FD } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { type EscalationBroker, type ExecHandler, startEscalationBroker } from '@ux/zsh-fork';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createBwrapSandbox } from './create-bwrap-sandbox.js';

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

function workspaceWrite(): EffectivePolicy {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ],
    },
    network: 'restricted',
  };
}

async function runSandboxed(handler: ExecHandler, argv: string[], options: { keep?: boolean } = {}) {
  const cwd = join(root, `w-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(cwd, { recursive: true });
  const session = await broker.openSession(handler);
  onTestFinished(() => session.close());
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', ...session.env };
  const plan = await backend.plan({
    argv,
    cwd,
    env,
    policy: workspaceWrite(),
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
