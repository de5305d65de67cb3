// The result contract: every call answers with a structured result (docs/reference/result.md) whose text is
// rendered from it; wall time counts from the call's start; refusals keep the shape and say who decided.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createExecPolicy } from '@ux/orchestrator';
import { execResultSchema, NoReviewerError, REVIEWER_SPECIFICATION_VERSION } from '@ux/protocol';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDoor, parseReceipt, scriptedReviewer, spawner } from '../test/test-support.js';
import { renderResultText } from './render-response.js';
import type { ToolResponse } from './tool-response.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const ctx = (callId = 'call-1') => ({ callId });

/** The result validates against the contract, and the text is its rendering. */
function checked(response: ToolResponse): ToolResponse {
  expect(execResultSchema.parse(response.result)).toEqual(response.result);
  expect(response.text).toBe(renderResultText(response.result));
  return response;
}

describe('wall time from the call start', () => {
  it('counts the early-exit window: sleep 0.6 reports at least 0.6 s, sleep 0.1 at least 0.1 s', async () => {
    const { door } = makeDoor();
    const long = checked(await door.execCommand({ cmd: 'sleep 0.6', login: false }, ctx()));
    expect(long.result).toMatchObject({ status: 'exited', exit_code: 0, command: 'sleep 0.6' });
    expect(long.result.wall_time_seconds).toBeGreaterThanOrEqual(0.6);
    expect(parseReceipt(long.text).wallTime).toBeGreaterThanOrEqual(0.6);
    const short = checked(await door.execCommand({ cmd: 'sleep 0.1', login: false }, ctx('c2')));
    expect(short.result.wall_time_seconds).toBeGreaterThanOrEqual(0.1);
  });

  it('counts a write and its settling time in a poll, and says how to go on while it runs', async () => {
    const { door } = makeDoor();
    const started = checked(
      await door.execCommand({ cmd: 'cat', tty: true, login: false, yield_time_ms: 250 }, ctx()),
    );
    expect(started.result).toMatchObject({ status: 'running', session_id: 1000, command: 'cat' });
    expect(started.result.next_step).toContain('write_stdin with session_id 1000');
    expect(started.text).toContain(`Next step: ${started.result.next_step}`);
    const written = checked(
      await door.writeStdin({ session_id: 1000, chars: 'hi\n', yield_time_ms: 250 }, ctx('w')),
    );
    expect(written.result).toMatchObject({ status: 'running', session_id: 1000 });
    // The write's settling time (100 ms) and the wait (250 ms) are both inside the call.
    expect(written.result.wall_time_seconds).toBeGreaterThanOrEqual(0.35);
    expect(written.result.command).toBeUndefined();
    const stopped = checked(await door.writeStdin({ session_id: 1000, chars: '\u0004' }, ctx('eof')));
    expect(stopped.result).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(stopped.result.next_step).toBeUndefined();
  });

  it('reports an interrupted wait as interrupted, with the session that keeps running', async () => {
    const { door } = makeDoor();
    const call = door.execCommand({ cmd: 'sleep 30', login: false, yield_time_ms: 30_000 }, ctx());
    await new Promise((resolve) => setTimeout(resolve, 400));
    door.interrupt();
    const response = checked(await call);
    expect(response).toMatchObject({ success: false, aborted: true });
    expect(response.result).toMatchObject({ status: 'interrupted', session_id: 1000, command: 'sleep 30' });
    expect(response.result.wall_time_seconds).toBeGreaterThanOrEqual(0.4);
    expect(response.result.next_step).toContain('session_id 1000');
  });
});

describe('refusals keep the shape', () => {
  it('quotes the command as the model sent it and names the person who said no', async () => {
    const reviewer = scriptedReviewer({ type: 'denied' });
    const { door } = makeDoor({ orchestrator: { approvalPolicy: 'untrusted', reviewer } });
    const response = checked(await door.execCommand({ cmd: 'touch made.txt' }, ctx()));
    expect(reviewer.requests).toHaveLength(1);
    expect(response.success).toBe(false);
    expect(response.result).toMatchObject({
      status: 'refused',
      command: 'touch made.txt',
      refusal: { decided_by: 'person', reason: 'rejected by the user' },
    });
    expect(response.result.next_step).toMatch(/do not run it again/);
    expect(response.text.split('\n')[0]).toBe('Not run `touch made.txt`: rejected by the user');
    expect(response.text).not.toContain('/bin/bash');
  });

  it('says nobody could be asked when the reviewer cannot ask anyone', async () => {
    const reviewer = {
      specificationVersion: REVIEWER_SPECIFICATION_VERSION,
      id: 'nobody',
      review: async () => {
        throw new NoReviewerError('the MCP client does not support elicitation');
      },
    } as const;
    const { door } = makeDoor({ orchestrator: { approvalPolicy: 'untrusted', reviewer } });
    const response = checked(await door.execCommand({ cmd: 'touch made.txt' }, ctx()));
    expect(response.result).toMatchObject({ status: 'refused', refusal: { decided_by: 'nobody' } });
    expect(response.result.refusal?.reason).toContain('does not support elicitation');
  });

  it('names a forbidding prefix rule, and the approval policy that forbids escalation', async () => {
    const execPolicy = createExecPolicy({
      rules: [
        { pattern: ['rm'], decision: 'forbidden', justification: 'use git clean', source: { file: 't' } },
      ],
    });
    const { door } = makeDoor({ orchestrator: { execPolicy } });
    const ruled = checked(await door.execCommand({ cmd: 'rm -rf build' }, ctx()));
    expect(ruled.result).toMatchObject({
      status: 'refused',
      command: 'rm -rf build',
      refusal: { decided_by: 'rule' },
    });
    expect(ruled.result.refusal?.reason).toContain('use git clean');
    const escalated = checked(
      await door.execCommand(
        { cmd: 'ls', sandbox_permissions: 'require_escalated', justification: 'x' },
        ctx('e'),
      ),
    );
    expect(escalated.result).toMatchObject({ status: 'refused', refusal: { decided_by: 'policy' } });
  });

  it('answers bad arguments and unknown sessions with status failed and a code', async () => {
    const { door } = makeDoor();
    const bad = checked(await door.execCommand({ cmd: 'ls', yield_time_ms: 'soon' }, ctx()));
    expect(bad.result).toMatchObject({
      status: 'failed',
      command: 'ls',
      error: { code: 'invalid_arguments' },
    });
    const unknown = checked(await door.writeStdin({ session_id: 4242 }, ctx('w')));
    expect(unknown.result).toMatchObject({ status: 'failed', error: { code: 'unknown_session' } });
    expect(unknown.result.next_step).toContain('exec_command');
  });
});

describe('apply_patch results', () => {
  const patch = (body: string) => `apply_patch <<'EOF'\n*** Begin Patch\n${body}\n*** End Patch\nEOF`;

  it('carries exit code 0, a chunk id, the command and its wall time when it applied', async () => {
    const { door, cwd } = makeDoor();
    const cmd = patch('*** Add File: hello.txt\n+hi');
    const response = checked(await door.execCommand({ cmd }, ctx()));
    expect(response.success).toBe(true);
    expect(response.result).toMatchObject({ status: 'exited', exit_code: 0, command: cmd });
    expect(response.result.chunk_id).toMatch(/^[0-9a-f]{6}$/);
    expect(response.result.wall_time_seconds).toBeGreaterThan(0);
    expect(response.result.output).toContain('Success.');
    expect(parseReceipt(response.text)).toMatchObject({ exitCode: 0, chunkId: response.result.chunk_id });
    expect(readFileSync(join(cwd, 'hello.txt'), 'utf8')).toBe('hi\n');
  });

  it('carries exit code 1 and what to do next when it did not apply', async () => {
    const { door, cwd } = makeDoor();
    writeFileSync(join(cwd, 'a.txt'), 'one\n');
    const cmd = patch('*** Update File: a.txt\n@@\n-two\n+three');
    const response = checked(await door.execCommand({ cmd }, ctx()));
    expect(response.success).toBe(false);
    expect(response.result).toMatchObject({ status: 'exited', exit_code: 1, command: cmd });
    expect(response.result.output).toMatch(/apply_patch (verification )?failed/);
    expect(response.result.next_step).toContain('No file was changed');
    expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\n');
  });

  it('is refused with the person named when the person says no', async () => {
    const reviewer = scriptedReviewer({ type: 'denied' });
    const { door } = makeDoor({ orchestrator: { approvalPolicy: 'untrusted', reviewer } });
    const cmd = patch('*** Add File: no.txt\n+no');
    const response = checked(await door.execCommand({ cmd }, ctx()));
    expect(response.result).toMatchObject({
      status: 'refused',
      command: cmd,
      refusal: { decided_by: 'person' },
    });
  });
});
