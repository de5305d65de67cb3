import { RejectedError } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeBackend, recordingAttempt, WORKSPACE_WRITE } from '../../test/fakes.js';
import { createOrchestrator, type OrchestratorRequest } from '../orchestrator/create-orchestrator.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

const request = (script: string): OrchestratorRequest => ({
  callId: 'call-1',
  argv: ['/bin/bash', '-lc', script],
  cwd: '/work/repo',
  tty: false,
});

function orchestratorWithoutReviewer(approvalPolicy: 'never' | 'untrusted') {
  return createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
    platform: 'linux',
    approvalPolicy,
    policy: WORKSPACE_WRITE,
    bashParser: bash,
  });
}

describe('an orchestrator without a reviewer', () => {
  it('runs what the policy never asks about', async () => {
    const { attempt, calls } = recordingAttempt(['ok']);
    const outcome = await orchestratorWithoutReviewer('never').run(request('touch x'), attempt);
    expect(outcome.status).toBe('completed');
    expect(calls).toHaveLength(1);
  });

  it('refuses a question at once as unattended, saying how to give a reviewer', async () => {
    const { attempt, calls } = recordingAttempt(['ok']);
    const error = await orchestratorWithoutReviewer('untrusted')
      .run(request('touch x'), attempt)
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(RejectedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ source: 'unattended' });
    expect((error as RejectedError).reason).toMatch(/started without a reviewer.*approval policy "never"/);
    expect(calls).toHaveLength(0);
  });
});
