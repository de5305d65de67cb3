import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApprovalRequest, RejectedError } from '@ux/protocol/core';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { createApprovalStore } from './approval-store.js';
import { createCommandReviewer } from './command-reviewer.js';
import { AUTO_REVIEW_TIMEOUT_REASON, requestApproval } from './request-approval.js';

useLeakCheck();

const REQUEST: ApprovalRequest = {
  call_id: 'call-1',
  command: ['/bin/bash', '-lc', 'git push'],
  display_command: 'git push',
  cwd: '/work/repo',
  retry: false,
  available_decisions: ['approved', 'denied', 'abort', 'timed_out'],
};
const signal = () => new AbortController().signal;
const sh = (script: string, timeoutMs?: number) =>
  createCommandReviewer({
    command: ['/bin/sh', '-c', script],
    id: 'bot',
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
/** The reviewer as the chain's automatic reviewer: what the orchestrator would do with its answer. */
const ask = (reviewer: ReturnType<typeof sh>) =>
  requestApproval(
    { hooks: [], autoReviewer: reviewer, user: reviewer, store: createApprovalStore() },
    {
      request: REQUEST,
      hookRequest: {
        tool: 'Bash',
        command: 'git push',
        argv: REQUEST.command,
        cwd: REQUEST.cwd,
        phase: 'initial',
        call_id: 'call-1',
      },
      hooks: 'allow_and_deny',
      reviewer: 'auto',
      cacheKey: 'k',
      signal: signal(),
    },
  );
const rejection = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!RejectedError.isInstance(error)) throw new Error(`expected a RejectedError, got ${String(error)}`);
  return error;
};

describe('createCommandReviewer', () => {
  it('is given the approval request as JSON and approves with {"decision":"allow"}', async () => {
    const dir = tempDir();
    const reviewer = sh(`cat > '${join(dir, 'request.json')}'; echo '{"decision":"allow"}'`);
    expect(reviewer.specificationVersion).toBe('ux-reviewer-v1');
    expect(await ask(reviewer)).toEqual({ type: 'approved' });
    expect(JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8'))).toEqual(REQUEST);
  });

  it('a denial carries its message to the model', async () => {
    const error = await rejection(ask(sh(`echo '{"decision":"deny","message":"pushes need a ticket"}'`)));
    expect(error.source).toBe('reviewer');
    expect(error.reason).toBe('rejected by the automatic reviewer "bot": pushes need a ticket');
    const plain = await rejection(ask(sh(`echo '{"decision":"deny"}'`)));
    expect(plain.reason).toBe('rejected by the automatic reviewer "bot"');
  });

  it('no answer in time is timed_out, with the timeout text, and the command it started is ended', async () => {
    const started = Date.now();
    const error = await rejection(ask(sh('sleep 30', 300)));
    expect(error.reason).toBe(AUTO_REVIEW_TIMEOUT_REASON);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each([
    ['a non-zero exit', 'echo broken >&2; exit 3', 'exited with code 3: broken'],
    ['empty output', 'true', 'answered with malformed JSON'],
    [
      'an unknown decision',
      `echo '{"decision":"ask"}'`,
      'answered the decision "ask"; expected "allow" or "deny"',
    ],
    ['not an object', 'echo 42', 'answered 42, expected an object'],
  ])('%s fails closed, saying what went wrong', async (_name, script, problem) => {
    const error = await rejection(ask(sh(script)));
    expect(error.source).toBe('reviewer');
    expect(error.reason).toContain('rejected by the automatic reviewer "bot" (the reviewer failed: "bot" ');
    expect(error.reason).toContain(problem);
  });

  it('a cancelled review is abort', async () => {
    const controller = new AbortController();
    const pending = sh('sleep 30').review(REQUEST, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({ type: 'abort' });
  });

  it('refuses an empty command', () => {
    expect(() => createCommandReviewer({ command: [] })).toThrow('needs a program to run');
  });
});
