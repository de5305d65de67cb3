// Ctrl-C, terminate, CleanBackgroundTerminals and shutdown through the door, with and without the
// real sandbox, on a PTY and on pipes: what a person at a terminal expects, and what the model gets.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import { REVIEWER_SPECIFICATION_VERSION, type SandboxPolicy } from '@ux/protocol';
import { descendantPids, isAlive, waitUntilDead } from '@ux/protocol-testing';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { createUnifiedExec, type UnifiedExec } from '@ux/unified-exec';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const local = createLocalSpawner();
const backend = createBwrapSandbox();
let root: string;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-door-signals-')));
  await warmUpSpawner(local);
  await backend.probe();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
afterAll(() => backend.close());

const SANDBOXES: Record<'none' | 'bwrap', SandboxPolicy> = {
  none: { type: 'danger-full-access' },
  bwrap: {
    type: 'workspace-write',
    writable_roots: [],
    network_access: false,
    exclude_tmpdir_env_var: true,
    exclude_slash_tmp: true,
  },
};

function door(sandbox: 'none' | 'bwrap'): { exec: UnifiedExec; cwd: string } {
  const cwd = join(root, `case-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(cwd, { recursive: true });
  const exec = createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
      approvalPolicy: 'never',
      policy: SANDBOXES[sandbox],
      reviewer: {
        specificationVersion: REVIEWER_SPECIFICATION_VERSION,
        id: 'nobody',
        review: async () => ({ type: 'denied' }),
      },
    }),
    spawner: local,
    toolPlan: planTools({
      flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
      platform: 'linux',
    }),
    cwd,
    userShell: '/bin/bash',
    deterministicIds: true,
    baseEnvironment: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: cwd },
  });
  onTestFinished(() => exec.shutdown());
  return { exec, cwd };
}

interface Receipt {
  exitCode?: string;
  sessionId?: string;
  output: string;
}
const receipt = (text: string): Receipt => ({
  exitCode: /Process exited with code (-?\d+)/.exec(text)?.[1],
  sessionId: /Process running with session ID (\d+)/.exec(text)?.[1],
  output: text.slice(text.indexOf('Output:\n') + 'Output:\n'.length),
});

/** Starts a session and polls until its output holds `ready`. */
async function startSession(exec: UnifiedExec, cmd: string, tty: boolean, ready: string) {
  const first = receipt(
    (await exec.execCommand({ cmd, tty, login: false, yield_time_ms: 500 }, { callId: 'start' })).text,
  );
  expect(first.sessionId, `the session ended early: ${first.output}`).toBeDefined();
  const id = Number(first.sessionId);
  let seen = first.output;
  for (let round = 0; !seen.includes(ready) && round < 40; round++) {
    seen += receipt(
      (await exec.writeStdin({ session_id: id, yield_time_ms: 250 }, { callId: 'poll' })).text,
    ).output;
  }
  expect(seen).toContain(ready);
  return id;
}

async function send(exec: UnifiedExec, id: number, chars: string, yieldMs = 1000) {
  return receipt(
    (await exec.writeStdin({ session_id: id, chars, yield_time_ms: yieldMs }, { callId: 'write' })).text,
  );
}

/** Polls until the output holds `needle` (the receipts' outputs joined). */
async function until(
  exec: UnifiedExec,
  id: number,
  needle: string | RegExp,
  first: Receipt,
): Promise<Receipt> {
  let last = first;
  let seen = first.output;
  for (let round = 0; !(typeof needle === 'string' ? seen.includes(needle) : needle.test(seen)); round++) {
    if (last.exitCode !== undefined || round > 40) break;
    last = await send(exec, id, '', 250);
    seen += last.output;
  }
  return { ...last, output: seen };
}

describe.each(['none', 'bwrap'] as const)('Ctrl-C through write_stdin, sandbox %s', (sandbox) => {
  it('PTY: the Python REPL prints KeyboardInterrupt, lives on, and answers print(6*7)', async () => {
    const { exec } = door(sandbox);
    const id = await startSession(exec, 'python3 -q', true, '>>> ');
    // Ctrl-C once the sleep has begun (the echo of the line shows "SLEEP" + "ING", not SLEEPING).
    await until(
      exec,
      id,
      /SLEEPING/,
      await send(exec, id, 'import time; print("SLEEP" + "ING"); time.sleep(30)\n'),
    );
    const interrupted = await until(exec, id, /KeyboardInterrupt[\s\S]*>>> /, await send(exec, id, '\u0003'));
    expect(interrupted.output).toMatch(/KeyboardInterrupt/);
    expect(interrupted.exitCode).toBeUndefined();
    const answer = await until(exec, id, '42', await send(exec, id, 'print(6*7)\n'));
    expect(answer.output).toMatch(/\b42\b/);
    expect(answer.sessionId).toBe(String(id));
  });

  it('pipes: a Python program that catches KeyboardInterrupt keeps running after Ctrl-C', async () => {
    const { exec } = door(sandbox);
    const program = [
      'import sys, time',
      'print("READY", flush=True)',
      'while True:',
      '    try:',
      '        time.sleep(30)',
      '    except KeyboardInterrupt:',
      '        print("KeyboardInterrupt", 6 * 7, flush=True)',
    ].join('\n');
    const id = await startSession(exec, `python3 -c '${program}'`, false, 'READY');
    const interrupted = await until(exec, id, 'KeyboardInterrupt 42', await send(exec, id, '\u0003'));
    expect(interrupted.output).toContain('KeyboardInterrupt 42');
    expect(interrupted.sessionId).toBe(String(id));
    // Still alive: the interrupt stopped nothing but the sleep, so a second one is caught the same way.
    const again = await until(exec, id, 'KeyboardInterrupt 42', await send(exec, id, '\u0003'));
    expect(again.output).toContain('KeyboardInterrupt 42');
    expect(again.exitCode).toBeUndefined();
    expect(exec.processes().find((p) => p.sessionId === id)?.running).toBe(true);
  });

  it.each([true, false])(
    "tty=%s: a bash INT trap runs and its exit code (42) is the receipt's",
    async (tty) => {
      const { exec } = door(sandbox);
      const id = await startSession(
        exec,
        "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done",
        tty,
        'READY',
      );
      const done = await until(exec, id, 'INT-TRAP', await send(exec, id, '\u0003'));
      const last = done.exitCode === undefined ? await send(exec, id, '', 2000) : done;
      expect(done.output).toContain('INT-TRAP');
      expect(last.exitCode).toBe('42');
      expect((await exec.writeStdin({ session_id: id }, { callId: 'after' })).text).toContain(
        'Unknown process id',
      );
    },
  );

  it.each([true, false])('tty=%s: the default SIGINT handler ends the command with 130', async (tty) => {
    const { exec } = door(sandbox);
    const id = await startSession(exec, 'echo READY; exec sleep 30', tty, 'READY');
    const done = await send(exec, id, '\u0003', 3000);
    expect(done.exitCode).toBe('130');
  });

  it('PTY: Ctrl-C stops a pipeline and the interactive shell returns to its prompt', async () => {
    const { exec } = door(sandbox);
    const id = await startSession(exec, "PS1='PROMPT> ' exec bash --norc --noprofile -i", true, 'PROMPT> ');
    await send(exec, id, 'sleep 30 | cat\n', 300);
    const back = await until(exec, id, /\^C[\s\S]*PROMPT> /, await send(exec, id, '\u0003'));
    expect(back.output).toMatch(/PROMPT> /);
    const answer = await until(exec, id, 'alive-42', await send(exec, id, 'echo alive-$((6*7))\n'));
    expect(answer.output).toContain('alive-42');
    expect(answer.sessionId).toBe(String(id));
  });

  it('pipes: Ctrl-C stops a pipeline, which ends with 130', async () => {
    const { exec } = door(sandbox);
    const id = await startSession(exec, 'echo READY; sleep 30 | cat', false, 'READY');
    expect((await send(exec, id, '\u0003', 3000)).exitCode).toBe('130');
  });
});

describe.each(['none', 'bwrap'] as const)('ending sessions that ignore SIGTERM, sandbox %s', (sandbox) => {
  const IGNORES_TERM =
    "trap '' TERM; (trap '' TERM; exec sleep 300) & echo READY; while :; do sleep 0.1; done";

  /** The processes this test process started since `before` (the reaper and the guard excluded). */
  const newDescendants = (before: Set<number>) =>
    descendantPids(process.pid).filter((pid) => !before.has(pid));

  it.each([
    ['cleanBackgroundTerminals', (exec: UnifiedExec) => exec.cleanBackgroundTerminals()],
    ['shutdown', (exec: UnifiedExec) => exec.shutdown()],
  ] as const)(
    '%s: every process, the wrapper included, is gone, SIGTERM ignored or not (PTY and pipes)',
    async (_, end) => {
      const { exec } = door(sandbox);
      const before = new Set(descendantPids(process.pid));
      await startSession(exec, IGNORES_TERM, true, 'READY');
      await startSession(exec, IGNORES_TERM, false, 'READY');
      const started = newDescendants(before);
      expect(started.length).toBeGreaterThanOrEqual(sandbox === 'bwrap' ? 8 : 4);
      const endedAt = Date.now();
      await end(exec);
      // Generous, not close to the 500 ms grace: what ignores SIGTERM would otherwise live forever.
      for (const pid of started)
        expect(await waitUntilDead(pid, 15_000 - (Date.now() - endedAt)), `pid ${pid}`).toBe(true);
      expect(started.filter(isAlive)).toEqual([]);
    },
  );
});
