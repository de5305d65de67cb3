import { ApprovalAbortedError } from '@ux/orchestrator';
import { RejectedError, SandboxUnavailableError, SpawnFailedError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { launchFailureResponse, REFUSAL_NEXT_STEPS } from './refusal-response.js';

const start = Date.now();

describe('launchFailureResponse', () => {
  it.each([
    ['user', 'person'],
    ['reviewer', 'reviewer'],
    ['hook', 'reviewer'],
    ['policy', 'policy'],
    ['unattended', 'nobody'],
  ] as const)('says a refusal from %s was decided by %s, with the next step for it', (source, decider) => {
    const response = launchFailureResponse(start, 'touch x', new RejectedError({ reason: 'no', source }));
    expect(response.success).toBe(false);
    expect(response.result).toMatchObject({
      status: 'refused',
      command: 'touch x',
      refusal: { decided_by: decider, reason: 'no' },
      next_step: REFUSAL_NEXT_STEPS[decider],
    });
    expect(response.error).toBeInstanceOf(RejectedError);
  });

  it("takes the error's own decider over its source (a prefix rule)", () => {
    const error = new RejectedError({ reason: '`rm` rejected: no', source: 'policy', decidedBy: 'rule' });
    expect(launchFailureResponse(start, 'rm -rf x', error).result.refusal?.decided_by).toBe('rule');
  });

  it('names the person for an abort, and asks the host to stop the turn', () => {
    const response = launchFailureResponse(start, 'ls', new ApprovalAbortedError());
    expect(response).toMatchObject({
      interruptTurn: true,
      result: { status: 'refused', refusal: { decided_by: 'person' } },
    });
  });

  it('answers a sandbox that cannot run, a start that failed and a bug with status failed and a code', () => {
    const unavailable = launchFailureResponse(
      start,
      'ls',
      new SandboxUnavailableError({ reason: 'no bwrap', fix: 'install bubblewrap' }),
    );
    expect(unavailable.result).toMatchObject({ status: 'failed', error: { code: 'sandbox_unavailable' } });
    expect(unavailable.result.next_step).toContain('install bubblewrap');
    const spawn = launchFailureResponse(
      start,
      'ls',
      new SpawnFailedError({ command: ['/bin/bash'], reason: 'ENOENT' }),
    );
    expect(spawn.result).toMatchObject({ status: 'failed', command: 'ls', error: { code: 'spawn_failed' } });
    const bug = launchFailureResponse(start, 'ls', new Error('boom'));
    expect(bug.result).toMatchObject({
      status: 'failed',
      error: { code: 'internal_error', message: 'boom' },
    });
  });
});
