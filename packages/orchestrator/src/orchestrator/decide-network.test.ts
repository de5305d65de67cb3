import type { ApprovalPolicy, ReviewDecision } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { fakeBackend, recordingReviewer, WORKSPACE_WRITE } from '../../test/fakes.js';
import { createOrchestrator } from './create-orchestrator.js';

function setup(approvalPolicy: ApprovalPolicy, answer: ReviewDecision | (() => Promise<never>)) {
  let ids = 0;
  const reviewer =
    typeof answer === 'function'
      ? { ...recordingReviewer({ type: 'approved' }), review: answer }
      : recordingReviewer(answer);
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
    platform: 'linux',
    approvalPolicy,
    policy: WORKSPACE_WRITE,
    reviewer,
    newApprovalId: () => `n${++ids}`,
  });
  const announced: unknown[] = [];
  orchestrator.onApprovalRequest((request) => announced.push(request));
  const decide = () =>
    orchestrator.decideNetwork({ host: 'example.org', port: 443, protocol: 'https', cwd: '/work' });
  return { orchestrator, reviewer, decide, announced };
}

describe('decideNetwork', () => {
  it('asks once with the host, and maps each answer to what the proxy does', async () => {
    const cases: [ReviewDecision, string][] = [
      [{ type: 'approved' }, 'allow_once'],
      [{ type: 'approved_for_session' }, 'allow_session'],
      [
        { type: 'network_policy_amendment', amendment: { host: 'example.org', action: 'allow' } },
        'allow_session',
      ],
      [
        { type: 'network_policy_amendment', amendment: { host: 'example.org', action: 'deny' } },
        'deny_session',
      ],
      [{ type: 'denied' }, 'deny'],
      [{ type: 'abort' }, 'deny_session'],
    ];
    for (const [answer, expected] of cases) {
      const { decide, reviewer } = setup('on-request', answer);
      expect(await decide(), answer.type).toBe(expected);
      expect(reviewer.requests).toHaveLength(1);
    }
  });

  it('puts the host, port and protocol in the question and announces it', async () => {
    const { decide, reviewer, announced } = setup('untrusted', { type: 'approved' });
    await decide();
    const question = reviewer.requests[0]!;
    expect(question).toMatchObject({
      call_id: 'network-n1',
      approval_id: 'n1',
      command: [],
      display_command: 'connect to example.org:443 (HTTP CONNECT)',
      cwd: '/work',
      reason: '"example.org" is not in the sandbox\'s network allow list',
      network_approval_context: { host: 'example.org', port: 443, protocol: 'https' },
      unsandboxed: 'never',
      retry: false,
      available_decisions: [
        'approved',
        'approved_for_session',
        'network_policy_amendment',
        'denied',
        'abort',
      ],
    });
    expect(announced).toEqual([question]);
  });

  it('refuses without asking under never, and under a granular policy without sandbox approvals', async () => {
    const never = setup('never', { type: 'approved' });
    expect(await never.decide()).toBe('deny');
    expect(never.reviewer.requests).toEqual([]);
    const granular = setup(
      {
        granular: {
          sandbox_approval: false,
          rules: true,
          skill_approval: true,
          request_permissions: true,
          mcp_elicitations: true,
        },
      } as ApprovalPolicy,
      { type: 'approved' },
    );
    expect(await granular.decide()).toBe('deny');
    expect(granular.reviewer.requests).toEqual([]);
  });

  it('denies when the reviewer fails, without throwing', async () => {
    const { decide } = setup('on-request', () => Promise.reject(new Error('the terminal went away')));
    expect(await decide()).toBe('deny');
  });

  it('never answers from the command approval cache: each question reaches the reviewer', async () => {
    const { decide, reviewer } = setup('on-request', { type: 'approved_for_session' });
    await decide();
    await decide();
    expect(reviewer.requests).toHaveLength(2);
  });
});
