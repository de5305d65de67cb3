import { type ApprovalRequest, RejectedError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { recordingReviewer } from '../../test/fakes.js';
import { createApprovalStore } from '../approval/approval-store.js';
import { SIMPLE_SCRIPT_PARSER } from '../shell/simple-script.js';
import type { CommandQuestion } from './build-approval-request.js';
import { type CommandApproverInput, commandApprover } from './command-approver.js';

const question: CommandQuestion = {
  phase: 'initial',
  reason: undefined,
  policyReason: 'untrusted asks',
  unsandboxed: 'never',
  hooks: 'allow_and_deny',
};

function approver(user: ReturnType<typeof recordingReviewer>, overrides: Partial<CommandApproverInput> = {}) {
  const announced: ApprovalRequest[] = [];
  const amendments: string[][] = [];
  const ask = commandApprover({
    request: { callId: 'call-1', argv: ['/bin/bash', '-lc', 'cargo test'], cwd: '/work/repo', tty: false },
    bash: SIMPLE_SCRIPT_PARSER,
    chain: { hooks: [], user, store: createApprovalStore() },
    reviewer: 'user',
    amendment: ['cargo', 'test'],
    denyRead: false,
    signal: new AbortController().signal,
    announce: (request) => announced.push(request),
    addAmendment: async (prefix) => void amendments.push(prefix),
    ...overrides,
  });
  return { ask, announced, amendments };
}

describe('commandApprover', () => {
  it('announces the question before the chain answers, and resolves on approval', async () => {
    const user = recordingReviewer({ type: 'approved' });
    const { ask, announced } = approver(user);
    await ask(question);
    expect(announced.map((request) => request.display_command)).toEqual(['cargo test']);
    expect(user.requests).toHaveLength(1);
  });

  it('saves an approved rule amendment', async () => {
    const user = recordingReviewer({ type: 'approved_execpolicy_amendment', amendment: ['cargo', 'test'] });
    const { ask, amendments } = approver(user);
    await ask(question);
    expect(amendments).toEqual([['cargo', 'test']]);
  });

  it('asks once per command and environment after approved_for_session', async () => {
    const user = recordingReviewer({ type: 'approved_for_session' });
    const store = createApprovalStore();
    const chain = { hooks: [], user, store };
    const local = approver(user, { chain });
    await local.ask(question);
    await local.ask(question);
    expect(user.requests).toHaveLength(1);
    const remote = approver(user, {
      chain,
      request: {
        callId: 'call-2',
        argv: ['/bin/bash', '-lc', 'cargo test'],
        cwd: '/work/repo',
        tty: false,
        environmentId: 'box',
      },
    });
    await remote.ask(question);
    expect(user.requests).toHaveLength(2);
  });

  it('throws the refusal', async () => {
    const { ask } = approver(recordingReviewer({ type: 'denied' }));
    await expect(ask(question)).rejects.toSatisfy((error: unknown) => RejectedError.isInstance(error));
  });
});
