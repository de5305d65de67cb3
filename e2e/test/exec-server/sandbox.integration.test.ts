// `process/start` with a `sandbox`: applied for real with bubblewrap (this platform's backend, through
// the registry), reported honestly, and refused with a fix when no sandbox can be applied.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { descendantPids, waitUntilDead } from '@ux/protocol-testing';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { b64, PATH, uri, WireSession, workspaceWriteContext as workspaceWrite } from './test-support.js';

useLeakCheck(5_000);

async function ready(args?: string[]) {
  const session = await WireSession.ready(args);
  onTestFinished(async () => {
    await session.close();
  });
  return session;
}

describe('sandboxed processes', () => {
  it('writes inside the workspace, is denied outside, and says so (T7)', async () => {
    const session = await ready();
    const root = tempDir('ux-es-sandbox-');
    const workspace = join(root, 'ws');
    mkdirSync(workspace);
    const outside = join(root, 'outside.txt');
    const started = await session.request('process/start', {
      processId: 'w1',
      argv: ['sh', '-c', `echo ok > inside.txt && echo inside-ok; touch ${outside}`],
      cwd: uri(workspace),
      env: { PATH },
      tty: false,
      arg0: null,
      sandbox: workspaceWrite(workspace),
    });
    expect(started.result).toEqual({ processId: 'w1', sandboxType: 'linuxSeccomp' });
    const events = await session.finished('w1');
    expect(events.find((m) => m.method === 'process/exited')!.params).toMatchObject({
      exitCode: 1,
      sandboxDenied: true,
    });
    expect(session.output('w1')).toContain('inside-ok');
    expect(session.output('w1')).toContain('Read-only file system');
    expect(existsSync(join(workspace, 'inside.txt'))).toBe(true);
    expect(existsSync(outside)).toBe(false);
    const read = (await session.request('process/read', { processId: 'w1' })).result!;
    expect(read.sandboxDenied).toBe(true);
  });

  it('hides files matched by a deny glob', async () => {
    const session = await ready();
    const workspace = tempDir('ux-es-glob-');
    writeFileSync(join(workspace, 'secret.env'), 'TOP-SECRET\n');
    writeFileSync(join(workspace, 'notes.txt'), 'visible notes\n');
    await session.request('process/start', {
      processId: 'g',
      argv: ['sh', '-c', 'cat notes.txt; cat secret.env'],
      cwd: uri(workspace),
      env: { PATH },
      tty: false,
      sandbox: workspaceWrite(workspace, [
        { path: { type: 'glob_pattern', pattern: `${workspace}/**/*.env` }, access: 'deny' },
      ]),
    });
    const events = await session.finished('g');
    expect(session.output('g')).toContain('visible notes');
    expect(session.output('g')).not.toContain('TOP-SECRET');
    expect(events.find((m) => m.method === 'process/exited')!.params!.exitCode).not.toBe(0);
  });

  it('runs without a sandbox for permissions "disabled", and reports none', async () => {
    const session = await ready();
    const started = await session.request('process/start', {
      processId: 'd',
      argv: ['true'],
      cwd: uri('/tmp'),
      env: { PATH },
      tty: false,
      sandbox: { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' },
    });
    expect(started.result).toEqual({ processId: 'd', sandboxType: 'none' });
  });

  it('refuses a sandboxed start when no backend can apply one, with a fix, and runs nothing', async () => {
    const session = await ready(['--listen', 'stdio', '--sandbox-backends', '']);
    const init = session.messages.find((m) => m.id === 1)!;
    expect((init.result!.environmentInfo as { capabilities: object }).capabilities).toMatchObject({
      uxSandboxedProcesses: false,
    });
    const workspace = tempDir('ux-es-nobox-');
    const marker = join(workspace, 'ran');
    const answer = await session.request('process/start', {
      processId: 'n',
      argv: ['touch', marker],
      cwd: uri(workspace),
      env: { PATH },
      tty: false,
      sandbox: workspaceWrite(workspace),
    });
    expect(answer.error?.code).toBe(-32603);
    expect(answer.error?.message).toMatch(
      /^sandbox requested but none can be applied here: .*; fix: .*The command was not run\.$/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses arg0 with a sandbox and unknown special paths', async () => {
    const session = await ready();
    const workspace = tempDir('ux-es-refuse-');
    const base = { processId: 'r', argv: ['true'], cwd: uri(workspace), env: { PATH }, tty: false };
    expect(
      (await session.request('process/start', { ...base, arg0: 'x', sandbox: workspaceWrite(workspace) }))
        .error?.message,
    ).toContain('arg0 cannot be combined with a sandbox');
    const odd = workspaceWrite(workspace, [
      { path: { type: 'special', value: { kind: 'home_dir' } }, access: 'write' },
    ]);
    expect((await session.request('process/start', { ...base, sandbox: odd })).error?.message).toContain(
      'unknown special path kind "home_dir"',
    );
  });
});

describe('signals to sandboxed processes', () => {
  /** Starts a sandboxed process and waits until its output holds `ready`. */
  async function start(session: WireSession, processId: string, script: string, tty: boolean, ready: string) {
    const workspace = tempDir('ux-es-signal-');
    const started = await session.request('process/start', {
      processId,
      argv: ['bash', '-c', script],
      cwd: uri(workspace),
      env: { PATH, HOME: workspace, TERM: 'dumb' },
      tty,
      pipeStdin: tty,
      arg0: null,
      sandbox: workspaceWrite(workspace),
    });
    expect(started.result).toEqual({ processId, sandboxType: 'linuxSeccomp' });
    await waitForOutput(session, processId, ready);
  }

  async function waitForOutput(session: WireSession, processId: string, needle: string | RegExp) {
    const seen = () => session.output(processId);
    const found = () => (typeof needle === 'string' ? seen().includes(needle) : needle.test(seen()));
    await session
      .waitFor(() => found())
      .catch(() => {
        throw new Error(`no ${needle} in the output of ${processId}: ${JSON.stringify(seen())}`);
      });
  }

  const exitCode = async (session: WireSession, processId: string) =>
    (await session.finished(processId)).find((m) => m.method === 'process/exited')!.params!.exitCode;

  const ctrlC = (session: WireSession, processId: string, tty: boolean) =>
    tty
      ? session.request('process/write', { processId, chunk: b64('\u0003'), writeId: `c-${processId}` })
      : session.request('process/signal', { processId, signal: 'interrupt' });

  it.each([true, false])('tty=%s: Ctrl-C runs the INT trap and the exit code is its 42', async (tty) => {
    const session = await ready();
    const trap = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done";
    await start(session, 'trap', trap, tty, 'READY');
    await ctrlC(session, 'trap', tty);
    expect(await exitCode(session, 'trap')).toBe(42);
    expect(session.output('trap')).toContain('INT-TRAP');
  });

  it.each([true, false])('tty=%s: Ctrl-C with the default handler ends the command with 130', async (tty) => {
    const session = await ready();
    await start(session, 'plain', 'echo READY; exec sleep 30', tty, 'READY');
    await ctrlC(session, 'plain', tty);
    expect(await exitCode(session, 'plain')).toBe(130);
  });

  it('tty: the Python REPL survives Ctrl-C and answers print(6*7)', async () => {
    const session = await ready();
    await start(session, 'py', 'exec python3 -q', true, '>>> ');
    await session.request('process/write', {
      processId: 'py',
      chunk: b64('import time; print("SLEEP" + "ING"); time.sleep(30)\n'),
      writeId: 'w1',
    });
    // The sleep has begun (the echo of the line shows "SLEEP" + "ING", not SLEEPING).
    await waitForOutput(session, 'py', /SLEEPING/);
    await ctrlC(session, 'py', true);
    await waitForOutput(session, 'py', /KeyboardInterrupt[\s\S]*>>> /);
    await session.request('process/write', { processId: 'py', chunk: b64('print(6*7)\n'), writeId: 'w2' });
    await waitForOutput(session, 'py', /\b42\b/);
    expect(session.events('py').some((m) => m.method === 'process/exited')).toBe(false);
    await session.request('process/write', { processId: 'py', chunk: b64('exit()\n'), writeId: 'w3' });
    expect(await exitCode(session, 'py')).toBe(0);
  });

  it.each([true, false])(
    'tty=%s: process/terminate ends a process that ignores SIGTERM, sandbox and all (SIGKILL after the grace)',
    async (tty) => {
      const session = await ready();
      const ignores =
        "trap '' TERM; (trap '' TERM; exec sleep 300) & echo READY; while :; do sleep 0.1; done";
      await start(session, 'stubborn', ignores, tty, 'READY');
      const pids = descendantPids(session.child.pid!).filter((pid) => {
        // The server's own helpers (the host reaper, the path guard) are not the process's.
        return !/ux-host-reaper|ux-path-guard/.test(readCommand(pid));
      });
      expect(pids.length).toBeGreaterThanOrEqual(4);
      const at = Date.now();
      expect((await session.request('process/terminate', { processId: 'stubborn' })).result).toEqual({
        running: true,
      });
      // The grace is 500 ms; a process that ignores SIGTERM would otherwise live forever, so the wait is
      // generous rather than close to the grace (a loaded machine takes its time to reap).
      for (const pid of pids)
        expect(await waitUntilDead(pid, 15_000 - (Date.now() - at)), `pid ${pid}`).toBe(true);
      expect(await exitCode(session, 'stubborn')).toBe(137);
    },
  );
});

function readCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}
