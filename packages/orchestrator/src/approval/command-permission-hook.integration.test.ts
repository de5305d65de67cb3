import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { createCommandPermissionHook } from './command-permission-hook.js';
import type { PermissionHookRequest } from './permission-hook.js';

useLeakCheck();

const REQUEST: PermissionHookRequest = {
  tool: 'Bash',
  command: 'git push origin main',
  argv: ['/bin/bash', '-lc', 'git push origin main'],
  cwd: '/work/repo',
  description: 'publish the branch',
  phase: 'initial',
  call_id: 'call-1',
};
const signal = () => new AbortController().signal;
const sh = (script: string, extra: { timeoutMs?: number; id?: string } = {}) =>
  createCommandPermissionHook({ command: ['/bin/sh', '-c', script], id: extra.id ?? 'test-hook', ...extra });

describe('createCommandPermissionHook', () => {
  it('sends the request as JSON on stdin and takes the decision from stdout', async () => {
    // A real hook: node reads the request and denies pushes.
    const script = `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);
      console.log(JSON.stringify(r.command.includes('push')?{decision:'deny',message:'no pushes from '+r.cwd}:{decision:'allow'}))})`;
    const hook = createCommandPermissionHook({ command: [process.execPath, '-e', script] });
    expect(hook.id).toBe(process.execPath.split('/').pop());
    expect(await hook.check(REQUEST, { signal: signal() })).toEqual({
      decision: 'deny',
      message: 'no pushes from /work/repo',
    });
    expect(await hook.check({ ...REQUEST, command: 'git status' }, { signal: signal() })).toEqual({
      decision: 'allow',
    });
  });

  it('passes the exact request, and its environment and working directory', async () => {
    const dir = tempDir();
    const hook = createCommandPermissionHook({
      command: [
        '/bin/sh',
        '-c',
        'cat > request.json; printf %s "$HOOK_TOKEN" > env.txt; echo "{\\"decision\\":\\"ask\\"}"',
      ],
      env: { HOOK_TOKEN: 'secret-42' },
      cwd: dir,
    });
    expect(await hook.check(REQUEST, { signal: signal() })).toEqual({ decision: 'ask' });
    expect(JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8'))).toEqual(REQUEST);
    expect(readFileSync(join(dir, 'env.txt'), 'utf8')).toBe('secret-42');
  });

  it.each([
    ['empty output means ask', 'cat >/dev/null', { decision: 'ask' }],
    ['a hook that never reads stdin still answers', `echo '{"decision":"allow"}'`, { decision: 'allow' }],
    ['deny without a message', `echo '{"decision":"deny"}'`, { decision: 'deny' }],
    ['deny with a blank message', `echo '{"decision":"deny","message":" "}'`, { decision: 'deny' }],
  ])('%s', async (_name, script, expected) => {
    expect(await sh(script).check(REQUEST, { signal: signal() })).toEqual(expected);
  });

  it.each([
    ['malformed JSON', 'echo yes', 'answered with malformed JSON: "yes"'],
    [
      'a JSON value that is not an object',
      'echo "[1]"',
      'answered [1], expected an object such as {"decision":"allow"}',
    ],
    [
      'an unknown decision',
      `echo '{"decision":"maybe"}'`,
      'answered the decision "maybe"; expected "allow", "deny" or "ask"',
    ],
    [
      'a message that is not a string',
      `echo '{"decision":"deny","message":3}'`,
      'answered with a "message" that is not a string',
    ],
    ['a non-zero exit', 'echo "policy server down" >&2; exit 3', 'exited with code 3: policy server down'],
    ['a non-zero exit without stderr', 'exit 1', 'exited with code 1'],
    ['a kill by a signal', 'kill -9 $$', 'was killed by SIGKILL'],
  ])('fails closed on %s', async (_name, script, problem) => {
    expect(await sh(script).check(REQUEST, { signal: signal() })).toEqual({
      decision: 'deny',
      message: `permission hook "test-hook" ${problem}; the command was not run`,
    });
  });

  it('fails closed when the program cannot start', async () => {
    const hook = createCommandPermissionHook({ command: ['/nonexistent/hook'] });
    const answer = await hook.check(REQUEST, { signal: signal() });
    expect(answer).toMatchObject({ decision: 'deny' });
    expect(answer.decision === 'deny' && answer.message).toMatch(
      /^permission hook "hook" could not start \/nonexistent\/hook: .*ENOENT.*; the command was not run$/,
    );
  });

  it('times out, kills the hook and everything it started, and denies', async () => {
    const started = Date.now();
    const answer = await sh('sleep 30 & sleep 30; echo late', { timeoutMs: 200 }).check(REQUEST, {
      signal: signal(),
    });
    expect(answer).toEqual({
      decision: 'deny',
      message: 'permission hook "test-hook" did not answer within 200 ms; the command was not run',
    });
    // At the 200 ms timeout, not when the hook's 30 s sleeps end (the only bound no loaded machine
    // breaks; the test may run past 30 s so that a hook that was waited out fails here).
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);

  it('stops a hook that writes far more than an answer', async () => {
    const answer = await sh('yes').check(REQUEST, { signal: signal() });
    expect(answer).toEqual({
      decision: 'deny',
      message:
        'permission hook "test-hook" wrote more than 1048576 bytes instead of a JSON answer; the command was not run',
    });
  });

  it('denies when cancelled, before or during the run', async () => {
    const aborted = new AbortController();
    aborted.abort();
    const cancelled = {
      decision: 'deny',
      message: 'permission hook "test-hook" was cancelled; the command was not run',
    };
    expect(await sh('echo never').check(REQUEST, { signal: aborted.signal })).toEqual(cancelled);
    // During the run: the abort comes once the hook has started (it leaves a mark, then sleeps).
    const mark = join(tempDir(), 'started');
    const later = new AbortController();
    const pending = sh(`touch '${mark}'; sleep 30`).check(REQUEST, { signal: later.signal });
    const deadline = Date.now() + 15_000;
    while (!existsSync(mark) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(existsSync(mark)).toBe(true);
    later.abort();
    expect(await pending).toEqual(cancelled);
  });

  it('needs a program', () => {
    expect(() => createCommandPermissionHook({ command: [] })).toThrow('needs a program to run');
  });
});
