import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ESCALATION_BROKER_SPECIFICATION_VERSION } from '@ux/protocol/core';
import { isAlive, runToEnd, waitUntilDead } from '@ux/protocol-testing';
import { createLocalSpawner, type LocalSpawnRequest } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner, zshForkPath } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { EscalateAction, ExecAction, ExecHandler, InterceptedExec } from './exec-handler.js';
import {
  type EscalationBroker,
  type EscalationSession,
  startEscalationBroker,
} from './start-escalation-broker.js';

const PATH = '/usr/local/bin:/usr/bin:/bin';
const runtimeDir = join(tmpdir(), `ux-esc-test-${process.pid}`);
const spawner = createLocalSpawner();
let broker: EscalationBroker;

/** Polls `check` until it holds; generous, since machines are noisy. */
async function waitUntil(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const diagnostics: string[] = [];

beforeAll(async () => {
  await warmUpSpawner(spawner);
  mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
});
// The leak check's baseline comes before the shared broker starts: closing it must leave nothing.
useLeakCheck();
beforeAll(async () => {
  broker = await startEscalationBroker({
    runtimeDir,
    onDiagnostic: (message) => {
      diagnostics.push(message);
      if (message.includes('unexpectedly')) console.error(message);
    },
  });
});
afterAll(async () => {
  await broker.close();
  expect(existsSync(broker.socketPath)).toBe(false);
  rmSync(runtimeDir, { recursive: true, force: true });
});

async function openSession(handler: ExecHandler, on = broker): Promise<EscalationSession> {
  const session = await on.openSession(handler);
  onTestFinished(() => session.close());
  return session;
}

/** Runs `argv` as a ZshFork command of `session` would be run: through the spawn helper, with the fd. */
async function start(session: EscalationSession, argv: string[], extra: Partial<LocalSpawnRequest> = {}) {
  const child = await spawner.spawn({
    argv,
    cwd: '/tmp',
    env: { PATH, ...session.env },
    tty: false,
    stdin: 'closed',
    escalation: session.spawnEscalation,
    ...extra,
  });
  onTestFinished(() => child.terminate());
  return child;
}

/** The wrapper invoked the way the patched zsh invokes it. */
function wrapped(file: string, ...argv: string[]): string[] {
  return [broker.wrapperPath, file, ...argv];
}

function recorder(answer: (exec: InterceptedExec) => ExecAction | Promise<ExecAction>) {
  const seen: InterceptedExec[] = [];
  const handler: ExecHandler = (exec) => {
    seen.push(exec);
    return answer(exec);
  };
  return { seen, handler };
}

describe('the contract', () => {
  it("is @ux/protocol's EscalationBroker, version 1", () => {
    const contract: EscalationBroker = broker;
    expect(contract.specificationVersion).toBe(ESCALATION_BROKER_SPECIFICATION_VERSION);
    expect(contract.specificationVersion).toBe('ux-escalation-broker-v1');
    expect(contract.id).toBe('zsh-fork');
  });
});

describe('Run', () => {
  it('executes the program in place and reports file, argv, workdir and env without its own variables', async () => {
    const { seen, handler } = recorder(() => ({ action: 'run' }));
    const session = await openSession(handler);
    const child = await start(session, wrapped('/bin/echo', 'echo', 'hi', 'there'), {
      env: { PATH, ...session.env, KEEP: 'me' },
    });
    const { status, text } = await runToEnd(child);
    expect(text).toBe('hi there\n');
    expect(status.exitCode).toBe(0);
    expect(seen).toEqual([
      { file: '/bin/echo', argv: ['echo', 'hi', 'there'], workdir: '/tmp', env: { PATH, KEEP: 'me' } },
    ]);
  });

  it('keeps the socket and the variables for the program, so a nested wrapper is intercepted too', async () => {
    const { seen, handler } = recorder(() => ({ action: 'run' }));
    const session = await openSession(handler);
    const script = '"$EXEC_WRAPPER" /bin/echo echo inner; echo fd=$UX_ESCALATE_SOCKET';
    const child = await start(session, wrapped('/bin/sh', 'sh', '-c', script));
    const { status, text } = await runToEnd(child);
    expect(text).toBe(`inner\nfd=${session.env.UX_ESCALATE_SOCKET}\n`);
    expect(status.exitCode).toBe(0);
    expect(seen.map((exec) => exec.file)).toEqual(['/bin/sh', '/bin/echo']);
  });

  it('reports bytes that are not UTF-8 and control characters exactly, and an escalation gives them back', async () => {
    const { seen, handler } = recorder((exec) => ({
      action: 'escalate',
      argv: [exec.file, ...exec.argv.slice(1)],
      cwd: exec.workdir,
      env: exec.env,
    }));
    const session = await openSession(handler);
    const script = `"$EXEC_WRAPPER" /usr/bin/printf printf '%s' "$(printf 'a\\377b\\001c"\\\\')"`;
    const child = await start(session, ['/bin/sh', '-c', script]);
    const { status, output } = await runToEnd(child);
    expect(status.exitCode).toBe(0);
    expect(seen[0]?.argv[2]).toBe('a\udcffb\u0001c"\\');
    expect([...output]).toEqual([...Buffer.from([0x61, 0xff, 0x62, 0x01, 0x63, 0x22, 0x5c])]);
  });

  it('runs a file without #! with /bin/sh, as zsh would, and says why a directory cannot run (126)', async () => {
    const dir = mkdtempSync(join(runtimeDir, 'noshebang-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, 'script');
    writeFileSync(script, 'echo "plain: $0 $*"\n', { mode: 0o755 });
    const session = await openSession(() => ({ action: 'run', cache: true }));
    const plain = await runToEnd(await start(session, wrapped(script, 'script', 'a', 'b')));
    expect(plain.text).toBe(`plain: ${script} a b\n`);
    expect(plain.status.exitCode).toBe(0);
    const another = await openSession(() => ({ action: 'run' }));
    const directory = await runToEnd(await start(another, wrapped(dir, 'x')));
    expect(directory.text).toContain(`cannot run ${dir}: Permission denied`);
    expect(directory.status.exitCode).toBe(126);
  });

  it('says when the program is missing (127)', async () => {
    const session = await openSession(() => ({ action: 'run' }));
    const missing = await runToEnd(await start(session, wrapped('/nonexistent/tool', 'tool')));
    expect(missing.status.exitCode).toBe(127);
    expect(missing.text).toContain('cannot run /nonexistent/tool');
  });
});

describe('Deny', () => {
  it('prints the reason and exits 1 without running the program', async () => {
    const session = await openSession(() => ({ action: 'deny', reason: 'rm is forbidden here' }));
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/echo', 'echo', 'ran')));
    expect(text).toBe('Execution denied: rm is forbidden here\n');
    expect(status.exitCode).toBe(1);
  });

  it('denies when the handler throws (fail closed)', async () => {
    const session = await openSession(() => {
      throw new Error('policy exploded');
    });
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/echo', 'echo', 'ran')));
    expect(text).toContain('Execution denied: the exec could not be decided: policy exploded');
    expect(text).not.toContain('ran');
    expect(status.exitCode).toBe(1);
  });

  it('denies an answer that is not an action, and an escalation by relative path', async () => {
    const answers: unknown[] = [
      { action: 'maybe' },
      { action: 'escalate', argv: ['echo'], cwd: '/', env: {} },
    ];
    for (const expected of ['an unknown action "maybe"', 'absolute path']) {
      const answer = answers.shift() as ExecAction;
      const session = await openSession(() => answer);
      const { status, text } = await runToEnd(await start(session, wrapped('/bin/echo', 'echo', 'ran')));
      expect(text).toContain(expected);
      expect(status.exitCode).toBe(1);
    }
  });

  it('refuses an exec request larger than 1 MiB', async () => {
    const { seen, handler } = recorder(() => ({ action: 'run' }));
    const session = await openSession(handler);
    const big = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`BIG${i}`, 'x'.repeat(120_000)]));
    const child = await start(session, wrapped('/bin/echo', 'echo', 'ran'), {
      env: { PATH, ...session.env, ...big },
    });
    const { status, text } = await runToEnd(child);
    expect(text).toContain('Execution denied: the command line and environment are larger');
    expect(status.exitCode).toBe(1);
    expect(seen).toEqual([]);
  });
});

describe('Escalate', () => {
  it("runs the program outside with exactly the given argv, cwd and env, on the wrapper's stdio", async () => {
    const events: string[] = [];
    const session = await openSession(() => ({
      action: 'escalate',
      argv: [
        '/bin/sh',
        '-c',
        'echo "out $(pwd) $ONLY"; echo err >&2; /usr/bin/env | sort | tr "\\n" " "; exit 7',
      ],
      cwd: '/usr',
      env: { ONLY: 'this' },
      onStart: (pid) => events.push(`start ${pid > 0}`),
      onExit: (code, signal) => events.push(`exit ${code} ${signal}`),
    }));
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/echo', 'echo', 'inside')));
    expect(text).toContain('out /usr this\n');
    expect(text).toContain('err\n');
    // `sh` adds PWD (and OLDPWD on some builds) of its own; nothing of the command's environment leaks.
    expect(text).toMatch(/ONLY=this /);
    expect(text).not.toContain('PATH=');
    expect(text).not.toContain('EXEC_WRAPPER');
    expect(text).not.toContain('inside');
    expect(status.exitCode).toBe(7);
    await waitUntil(() => events.length >= 2);
    expect(events).toEqual(['start true', 'exit 7 null']);
  });

  it('runs the child in a process group of its own with default signal dispositions', async () => {
    const session = await openSession(() => ({
      action: 'escalate',
      // The masks are read by the shell's own process after `exec`, not by a child looking at a shell
      // that is waiting for it: dash blocks every signal for moments of its wait.
      argv: ['/bin/sh', '-c', 'cat /proc/$$/stat; exec grep -E "^Sig(Ign|Blk)" /proc/self/status'],
      cwd: '/',
      env: {},
    }));
    const child = await start(session, wrapped('/bin/true', 'true'));
    const { text } = await runToEnd(child);
    const stat = text.split('\n')[0]!;
    const [pid] = stat.split(' ');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect(fields[2]).toBe(pid); // pgid: its own group
    expect(fields[2]).not.toBe(String(child.pid));
    // Signals 1–31 (glibc keeps 32 and 33 for itself: an ignored one inherited from the test runner
    // cannot be reset through sigaction, and nothing sends it).
    const ignored = BigInt(`0x${/SigIgn:\t([0-9a-f]+)/.exec(text)![1]}`);
    expect(ignored & 0x7fffffffn).toBe(0n);
    expect(text).toContain('SigBlk:\t0000000000000000');
  });

  it('dies of the signal that killed the child: 128+signal, never 127', async () => {
    let exited!: (exit: [number, NodeJS.Signals | null]) => void;
    const exit = new Promise<[number, NodeJS.Signals | null]>((resolve) => {
      exited = resolve;
    });
    const session = await openSession(() => ({
      action: 'escalate',
      argv: ['/bin/sh', '-c', 'kill -TERM $$'],
      cwd: '/',
      env: {},
      onExit: (code, signal) => exited([code, signal]),
    }));
    const { status } = await runToEnd(await start(session, wrapped('/bin/true', 'true')));
    expect(status).toEqual({ exitCode: 143, signal: 'SIGTERM' });
    // Node hears of the exit on its own channel, possibly after the wrapper ended.
    expect(await exit).toEqual([143, 'SIGTERM']);
  });

  it('handles 20 execs at once from one command, decided concurrently', async () => {
    // Every decision waits until all 20 are pending at once (or 20 s passed, so that a broker that
    // decides one at a time fails on \`most\` instead of hanging): they are concurrent.
    let pending = 0;
    let most = 0;
    let release!: () => void;
    const allPending = new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, 20_000).unref();
    });
    const session = await openSession(async (exec) => {
      most = Math.max(most, ++pending);
      if (pending === 20) release();
      await allPending;
      const n = Number(exec.argv[1]);
      return n % 2 === 0
        ? { action: 'run' }
        : { action: 'escalate', argv: ['/bin/echo', `escalated-${n}`], cwd: '/', env: {} };
    });
    const script = 'for i in $(seq 1 20); do "$EXEC_WRAPPER" /bin/echo echo $i & done; wait';
    const { status, text } = await runToEnd(await start(session, ['/bin/sh', '-c', script]));
    expect(status.exitCode).toBe(0);
    const lines = text.split('\n').filter(Boolean).sort();
    const expected = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 1 ? String(i + 1) : `escalated-${i + 1}`,
    ).sort();
    expect(lines).toEqual(expected);
    expect(most).toBe(20);
  }, 30_000);

  it('passes Ctrl-C in a PTY on to the escalated child', async () => {
    let started: number | undefined;
    const session = await openSession(() => ({
      action: 'escalate',
      argv: ['/bin/sleep', '30'],
      cwd: '/',
      env: {},
      onStart: (pid) => {
        started = pid;
      },
    }));
    const child = await start(session, wrapped('/bin/sleep', 'sleep', '30'), { tty: true });
    await waitUntil(() => started !== undefined);
    expect(started).toBeGreaterThan(0);
    await child.write('\u0003');
    const status = await Promise.race([
      child.exited,
      new Promise((r) => setTimeout(() => r('timeout'), 15_000).unref()),
    ]);
    expect(status).toEqual({ exitCode: 130, signal: 'SIGINT' });
    expect(await waitUntilDead(started!)).toBe(true);
  }, 30_000);

  it('ends the escalated child when the command is killed (its wrapper goes away)', async () => {
    let started: number | undefined;
    const session = await openSession(() => ({
      action: 'escalate',
      argv: ['/bin/sh', '-c', 'trap "" TERM; sleep 30'],
      cwd: '/',
      env: {},
      onStart: (pid) => {
        started = pid;
      },
    }));
    const child = await start(session, wrapped('/bin/sleep', 'sleep', '30'));
    await waitUntil(() => started !== undefined);
    process.kill(child.pid!, 'SIGKILL');
    await child.exited;
    // It ignores SIGTERM: SIGKILL follows after 500 ms (the wait is generous: machines are noisy).
    expect(await waitUntilDead(started!, 15_000)).toBe(true);
  }, 30_000);

  it('ends escalated children when their session is closed', async () => {
    let started: number | undefined;
    const session = await broker.openSession(() => ({
      action: 'escalate',
      argv: ['/bin/sleep', '30'],
      cwd: '/',
      env: {},
      onStart: (pid) => {
        started = pid;
      },
    }));
    const child = await start(session, wrapped('/bin/sleep', 'sleep', '30'));
    await waitUntil(() => started !== undefined);
    await session.close();
    expect(isAlive(started!)).toBe(false);
    const { status } = await runToEnd(child);
    expect(status).toEqual({ exitCode: 143, signal: 'SIGTERM' });
  });
});

/** A directory's identity, and that of each directory above it up to `/`, as the decision records them. */
function identityOf(dir: string): NonNullable<EscalateAction['cwdIdentity']> {
  const id = (path: string) => {
    const stat = statSync(path, { bigint: true });
    return { dev: `${stat.dev}`, ino: `${stat.ino}` };
  };
  const ancestors = [];
  for (let at = dir; at !== '/'; at = dirname(at)) ancestors.push(id(dirname(at)));
  return { ...id(dir), ancestors };
}

describe('Escalate into the directory the decision checked (cwdIdentity)', () => {
  function base(): string {
    const dir = realpathSync(mkdtempSync(join(runtimeDir, 'cwd-')));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** An escalation of `sh -c script` in `cwd` with `identity`, recording what the broker reports. */
  function escalation(cwd: string, identity: EscalateAction['cwdIdentity'], script: string) {
    const events: string[] = [];
    const action: EscalateAction = {
      action: 'escalate',
      argv: ['/bin/sh', '-c', script],
      cwd,
      env: {},
      ...(identity ? { cwdIdentity: identity } : {}),
      onStart: () => events.push('start'),
      onExit: (code) => events.push(`exit ${code}`),
      onCwdChanged: () => events.push('cwd changed'),
      onSettled: () => events.push('settled'),
    };
    return { events, action };
  }

  it('runs the program in the directory when it is still the one checked', async () => {
    const dir = join(base(), 'work');
    mkdirSync(dir);
    const { events, action } = escalation(dir, identityOf(dir), 'pwd');
    const session = await openSession(() => action);
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/true', 'true')));
    expect(text).toBe(`${dir}\n`);
    expect(status.exitCode).toBe(0);
    await waitUntil(() => events.includes('exit 0'));
    expect(events).toEqual(['settled', 'start', 'exit 0']);
  });

  it('refuses (126, a message, onCwdChanged) when another directory took the path since the check', async () => {
    const root = base();
    const dir = join(root, 'work');
    mkdirSync(dir);
    const checked = identityOf(dir);
    renameSync(dir, join(root, 'checked'));
    mkdirSync(dir);
    const { events, action } = escalation(dir, checked, `touch ${join(root, 'ran')}`);
    const session = await openSession(() => action);
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/true', 'true')));
    expect(text).toBe(
      'ux: the working directory changed after it was checked; not run outside the sandbox\n',
    );
    expect(status.exitCode).toBe(126);
    expect(existsSync(join(root, 'ran'))).toBe(false);
    await waitUntil(() => events.includes('exit 126'));
    expect(events).toEqual(['settled', 'cwd changed', 'exit 126']);
  });

  it('refuses when the directory itself is the same but now lies under another parent', async () => {
    const root = base();
    mkdirSync(join(root, 'a', 'sub'), { recursive: true });
    const dir = join(root, 'a', 'sub');
    const checked = identityOf(dir);
    // The same `sub`, still at a/sub, but `a` is now another directory (one with, say, a planted .git).
    mkdirSync(join(root, 'planted'));
    renameSync(dir, join(root, 'planted', 'sub'));
    renameSync(join(root, 'a'), join(root, 'old-a'));
    renameSync(join(root, 'planted'), join(root, 'a'));
    expect(identityOf(dir).ino).toBe(checked.ino);
    const { events, action } = escalation(dir, checked, `touch ${join(root, 'ran')}`);
    const session = await openSession(() => action);
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/true', 'true')));
    expect(text).toContain('the working directory changed after it was checked');
    expect(status.exitCode).toBe(126);
    expect(existsSync(join(root, 'ran'))).toBe(false);
    await waitUntil(() => events.includes('exit 126'));
    expect(events).toContain('cwd changed');
  });

  it('says when the directory is gone (127), without a child', async () => {
    const missing = join(base(), 'gone');
    const { events, action } = escalation(missing, undefined, 'true');
    const session = await openSession(() => action);
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/true', 'true')));
    expect(text).toBe(`ux: escalated command: cannot enter ${missing}: No such file or directory\n`);
    expect(status.exitCode).toBe(127);
    await waitUntil(() => events.includes('exit 127'));
    expect(events).toEqual(['settled', 'exit 127']);
  });

  it('denies an identity that is not decimal dev and ino strings, and releases what the action held', async () => {
    const dir = base();
    const { events, action } = escalation(dir, { dev: '0x10', ino: '1', ancestors: [] }, 'true');
    const session = await openSession(() => action);
    const { status, text } = await runToEnd(await start(session, wrapped('/bin/true', 'true')));
    expect(text).toContain("Execution denied: the exec could not be decided: an escalation's cwdIdentity");
    expect(status.exitCode).toBe(1);
    expect(events).toEqual(['settled']);
  });
});

describe('with the patched zsh', () => {
  it('sends every exec of a script to the broker, nested zsh included, and obeys each answer', async () => {
    const zsh = zshForkPath();
    const { seen, handler } = recorder((exec) =>
      exec.argv[1] === 'denied' ? { action: 'deny', reason: 'not this one' } : { action: 'run' },
    );
    const session = await openSession(handler);
    const script = `/bin/echo a; /bin/true; /bin/echo denied; ${zsh} -fc '/bin/echo nested'`;
    const child = await start(session, [zsh, '-fc', script], {
      env: { PATH, HOME: '/nonexistent', ...session.env },
    });
    const { status, text } = await runToEnd(child);
    expect(seen.map((exec) => [exec.file, ...exec.argv.slice(1)].join(' '))).toEqual([
      '/bin/echo a',
      '/bin/true',
      '/bin/echo denied',
      `${zsh} -fc /bin/echo nested`,
      '/bin/echo nested',
    ]);
    expect(text).toBe('a\nExecution denied: not this one\nnested\n');
    expect(status.exitCode).toBe(0);
  });
});

describe('the Run cache (a repeat of a cacheable Run is answered by the broker)', () => {
  const echoes = (seen: InterceptedExec[]) =>
    seen.map((exec) => `${exec.workdir} ${JSON.stringify([exec.file, ...exec.argv.slice(1)])}`);

  it('answers only an exact repeat (file, argv, workdir) itself; every other exec goes to Node', async () => {
    const zsh = zshForkPath();
    const { seen, handler } = recorder(() => ({ action: 'run', cache: true }));
    const session = await openSession(handler);
    const script = [
      '/bin/echo a b',
      '/bin/echo a b',
      "/bin/echo 'a b'",
      '/bin/echo ab',
      "/bin/echo a b ''",
      "/bin/echo a $'\\377'b",
      'cd /',
      '/bin/echo a b',
      'cd /tmp',
      '/bin/echo a b',
      '/bin/echo a b',
    ].join('; ');
    const child = await start(session, [zsh, '-fc', script], {
      env: { PATH, HOME: '/nonexistent', ...session.env },
    });
    const { status } = await runToEnd(child);
    expect(status.exitCode).toBe(0);
    expect(echoes(seen)).toEqual([
      '/tmp ["/bin/echo","a","b"]',
      '/tmp ["/bin/echo","a b"]',
      '/tmp ["/bin/echo","ab"]',
      '/tmp ["/bin/echo","a","b",""]',
      '/tmp ["/bin/echo","a","\\udcffb"]',
      '/ ["/bin/echo","a","b"]',
    ]);
    await session.close();
    expect(session.cachedRuns).toBe(3);
  });

  it('never answers by itself without cache: true on a Run, nor for a denial', async () => {
    const zsh = zshForkPath();
    const { seen, handler } = recorder((exec) =>
      exec.argv[1] === 'no'
        ? ({ action: 'deny', reason: 'not this', cache: true } as unknown as ExecAction)
        : { action: 'run' },
    );
    const session = await openSession(handler);
    const script = '/bin/echo yes; /bin/echo yes; /bin/echo no; /bin/echo no; /bin/echo yes';
    const { text } = await runToEnd(
      await start(session, [zsh, '-fc', script], { env: { PATH, ...session.env } }),
    );
    expect(text).toBe('yes\nyes\nExecution denied: not this\nExecution denied: not this\nyes\n');
    expect(seen).toHaveLength(5);
    await session.close();
    expect(session.cachedRuns).toBe(0);
  });

  it('forgets every cached answer at invalidateCaches(), before any later exec is answered', async () => {
    const zsh = zshForkPath();
    let allowed = true;
    const { seen, handler } = recorder((exec) => {
      if (exec.argv[1] === 'switch') {
        // A rule changed: from now on Node denies `x`.
        allowed = false;
        broker.invalidateCaches();
        return { action: 'run' };
      }
      return allowed ? { action: 'run', cache: true } : { action: 'deny', reason: 'the rule changed' };
    });
    const session = await openSession(handler);
    const script = '/bin/echo x; /bin/echo x; /bin/echo switch; /bin/echo x; /bin/echo x';
    const { text } = await runToEnd(
      await start(session, [zsh, '-fc', script], { env: { PATH, ...session.env } }),
    );
    expect(text).toBe(
      'x\nx\nswitch\nExecution denied: the rule changed\nExecution denied: the rule changed\n',
    );
    expect(seen.map((exec) => exec.argv[1])).toEqual(['x', 'switch', 'x', 'x']);
    await session.close();
    expect(session.cachedRuns).toBe(1);
  });

  it('does not cache an answer decided across an invalidation', async () => {
    const zsh = zshForkPath();
    let first = true;
    const { seen, handler } = recorder(async () => {
      if (first) {
        first = false;
        // The rules change while this exec is being decided: its answer may be stale for the next.
        await new Promise((resolve) => setTimeout(resolve, 5));
        broker.invalidateCaches();
      }
      return { action: 'run', cache: true };
    });
    const session = await openSession(handler);
    const script = '/bin/echo x; /bin/echo x; /bin/echo x';
    await runToEnd(await start(session, [zsh, '-fc', script], { env: { PATH, ...session.env } }));
    expect(seen).toHaveLength(2);
    await session.close();
    expect(session.cachedRuns).toBe(1);
  });

  it('a command attacking its socket (garbage, floods, near-misses) never gets Run for what Node refuses', async () => {
    const zsh = zshForkPath();
    // Node allows exactly `/bin/echo ok` (cacheable) and the attacking shell; everything else is denied.
    const { seen, handler } = recorder((exec) => {
      const words = JSON.stringify([exec.file, ...exec.argv.slice(1)]);
      if (words === '["/bin/echo","ok"]' || exec.file === '/bin/bash' || exec.argv[0] === 'fill')
        return { action: 'run', cache: true };
      return { action: 'deny', reason: `not ${words}` };
    });
    const session = await openSession(handler);
    // An unpatched bash (not intercepted below it) talks to the socket directly: garbage datagrams
    // (no descriptor attached), then the wrapper with near-miss words, while a flood of distinct
    // cacheable execs fills the cache.
    const attack = [
      'i=0; while [ $i -lt 300 ]; do printf "garbage$i" >&$UX_ESCALATE_SOCKET; i=$((i+1)); done',
      'i=0; while [ $i -lt 150 ]; do "$EXEC_WRAPPER" /bin/true fill $i; i=$((i+1)); done',
      'for w in "ok " " ok" "o k" "ok\\n" "OK"; do "$EXEC_WRAPPER" /bin/echo echo "$w"; done',
      '"$EXEC_WRAPPER" /bin/echo echo ok extra',
      '"$EXEC_WRAPPER" /bin/echo/ echo ok',
      '"$EXEC_WRAPPER" /bin//echo echo ok',
      // The exact words zsh sends for `/bin/echo ok` (argv[0] as typed): answered from the cache.
      '"$EXEC_WRAPPER" /bin/echo /bin/echo ok',
      '"$EXEC_WRAPPER" /bin/echo /bin/echo ok',
    ].join('; ');
    const script = `/bin/echo ok; /bin/bash -c '${attack.replaceAll("'", "'\\''")}'; /bin/echo ok`;
    const { status, text } = await runToEnd(
      await start(session, [zsh, '-fc', script], { env: { PATH, ...session.env } }),
      60_000,
    );
    expect(status.exitCode).toBe(0);
    const lines = text.split('\n').filter(Boolean);
    // Every near-miss was decided by Node and denied; only the exact words ran.
    expect(lines.filter((line) => line === 'ok')).toHaveLength(4);
    expect(lines.filter((line) => line.startsWith('Execution denied:'))).toHaveLength(8);
    expect(lines.filter((line) => line !== 'ok' && !line.startsWith('Execution denied:'))).toEqual([]);
    const asked = seen.map((exec) => JSON.stringify([exec.file, ...exec.argv.slice(1)]));
    expect(asked.filter((words) => words === '["/bin/echo","ok"]')).toHaveLength(1);
    expect(seen.filter((exec) => exec.argv[0] === 'fill')).toHaveLength(150);
    await session.close();
    expect(session.cachedRuns).toBe(3);
    expect(diagnostics.some((message) => message.includes('without exactly one stream socket'))).toBe(true);
  });

  it('keeps one session from answering for another', async () => {
    const zsh = zshForkPath();
    const first = recorder(() => ({ action: 'run', cache: true }));
    const second = recorder(() => ({ action: 'deny', reason: 'not in this session' }));
    const a = await openSession(first.handler);
    const b = await openSession(second.handler);
    await runToEnd(await start(a, [zsh, '-fc', '/bin/echo x; /bin/echo x'], { env: { PATH, ...a.env } }));
    const { text } = await runToEnd(await start(b, [zsh, '-fc', '/bin/echo x'], { env: { PATH, ...b.env } }));
    expect(text).toBe('Execution denied: not in this session\n');
    expect(first.seen).toHaveLength(1);
    expect(second.seen).toHaveLength(1);
  });
});

describe('sessions and tokens', () => {
  it('aborts a pending decision when the command goes away', async () => {
    let aborted: Promise<void> | undefined;
    let reached!: () => void;
    const asked = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const session = await openSession((_exec, { signal }) => {
      aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve()));
      reached();
      return new Promise<ExecAction>(() => {});
    });
    const child = await start(session, wrapped('/bin/echo', 'echo', 'never'));
    await asked;
    process.kill(child.pid!, 'SIGKILL');
    await child.exited;
    await aborted;
  });

  it('refuses a token the broker does not know: the command never runs', async () => {
    const { seen, handler } = recorder(() => ({ action: 'run' }));
    const session = await openSession(handler);
    const child = await start(session, ['/bin/echo', 'ran'], {
      escalation: { ...session.spawnEscalation, token: 'ab'.repeat(16) },
    });
    const { status, text } = await runToEnd(child);
    expect(status.exitCode).toBe(127);
    expect(text).toContain('the broker refused the token');
    expect(text).not.toContain('ran');
    expect(seen).toEqual([]);
    expect(diagnostics.some((d) => d.includes('unknown token'))).toBe(true);
  });

  it('refuses a token used once already', async () => {
    const session = await openSession(() => ({ action: 'run' }));
    const first = await runToEnd(await start(session, wrapped('/bin/echo', 'echo', 'first')));
    expect(first.text).toBe('first\n');
    const second = await runToEnd(await start(session, ['/bin/echo', 'second']));
    expect(second.status.exitCode).toBe(127);
    expect(second.text).toContain('refused');
    expect(second.text).not.toContain('second\n');
  });

  it('fails closed without a usable UX_ESCALATE_SOCKET', async () => {
    const envs: Record<string, string>[] = [
      { PATH },
      { PATH, UX_ESCALATE_SOCKET: '1' },
      { PATH, UX_ESCALATE_SOCKET: 'x' },
    ];
    for (const env of envs) {
      const child = await spawner.spawn({
        argv: wrapped('/bin/echo', 'echo', 'ran'),
        cwd: '/',
        env,
        tty: false,
        stdin: 'closed',
      });
      const { status, text } = await runToEnd(child);
      expect(status.exitCode).toBe(1);
      expect(text).toMatch(/^ux-execve-wrapper: .*refusing to run a command without interception/);
    }
  });

  it('fails closed when the session is closed before its command execs', async () => {
    let decided = 0;
    const session = await openSession(() => {
      decided += 1;
      return { action: 'run' as const };
    });
    const child = await start(
      session,
      wrapped('/bin/sh', 'sh', '-c', 'read _ <&0; "$EXEC_WRAPPER" /bin/echo echo ran'),
      {
        stdin: 'pipe',
      },
    );
    // The first exec (sh) is decided; then the session closes under the waiting script.
    await waitUntil(() => decided === 1);
    await session.close();
    await child.write('go\n');
    const { status, text } = await runToEnd(child);
    expect(status.exitCode).toBe(1);
    expect(text).toContain('ux-execve-wrapper:');
    expect(text).not.toContain('ran');
  });
});

describe('the broker process', () => {
  it('ends every escalated child and exits at stdin EOF (close)', async () => {
    const own = await startEscalationBroker({ runtimeDir });
    let started: number | undefined;
    const session = await own.openSession(() => ({
      action: 'escalate',
      argv: ['/bin/sleep', '30'],
      cwd: '/',
      env: {},
      onStart: (pid) => {
        started = pid;
      },
    }));
    const child = await start(session, [own.wrapperPath, '/bin/sleep', 'sleep', '30']);
    await waitUntil(() => started !== undefined);
    expect(started).toBeGreaterThan(0);
    await own.close();
    expect(isAlive(started!)).toBe(false);
    expect(isAlive(own.pid)).toBe(false);
    expect(existsSync(own.socketPath)).toBe(false);
    const { status } = await runToEnd(child);
    expect([1, 143]).toContain(status.exitCode);
    await expect(own.openSession(() => ({ action: 'run' }))).rejects.toThrow(/stopped/);
  });

  it('answers bad input with an error and carries on', async () => {
    const own = await startEscalationBroker({ runtimeDir, onDiagnostic: (m) => diagnostics.push(m) });
    onTestFinished(() => own.close());
    const stdin = (own as unknown as { child: { stdin: NodeJS.WritableStream } }).child.stdin;
    const before = diagnostics.length;
    stdin.write(
      'not json\n{"op":"nope"}\n{"op":"reply","request":"x"}\n{"op":"open","session":"a","token":"zz"}\n',
    );
    stdin.write(`${'['.repeat(100000)}\n{"op":"close","session":"missing"}\n`);
    await waitUntil(() => diagnostics.length - before >= 6);
    expect(diagnostics.length - before).toBe(6);
    const session = await openSession(() => ({ action: 'run' }), own);
    const { text } = await runToEnd(
      await start(session, [own.wrapperPath, '/bin/echo', 'echo', 'still fine']),
    );
    expect(text).toBe('still fine\n');
    expect(readFileSync(`/proc/${own.pid}/stat`, 'utf8')).toContain('ux-escalate-bro');
  });

  it('measures the Run path (printed, not asserted)', async () => {
    const loop = (body: string) => `i=0; while [ $i -lt 300 ]; do ${body}; i=$((i+1)); done`;
    const time = async (script: string) => {
      const started = process.hrtime.bigint();
      const session = await openSession(() => ({ action: 'run' }));
      const { status } = await runToEnd(await start(session, ['/bin/sh', '-c', script]), 60_000);
      expect(status.exitCode).toBe(0);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    await time(loop('/bin/true'));
    const direct: number[] = [];
    const viaWrapper: number[] = [];
    for (let round = 0; round < 3; round++) {
      direct.push(await time(loop('/bin/true')));
      viaWrapper.push(await time(loop('"$EXEC_WRAPPER" /bin/true true')));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
    const overhead = (median(viaWrapper) - median(direct)) / 300;
    console.log(
      `BENCH zsh_fork.run_path.per_exec_overhead_ms ${overhead.toFixed(3)} (direct ${(median(direct) / 300).toFixed(3)} ms/exec, wrapped ${(median(viaWrapper) / 300).toFixed(3)} ms/exec; broker and Node round trip included)`,
    );
  }, 120_000);
});
