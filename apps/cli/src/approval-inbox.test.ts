import {
  type ApprovalRequest,
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  type Reviewer,
} from '@ux/protocol/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApprovalInbox,
  approvalKind,
  decisionWord,
  InboxAnswerError,
  type InboxEvent,
  TIMED_OUT,
} from './approval-inbox.js';
import { approvalRoute, clientThenInboxReviewer, createInboxReviewer } from './inbox-reviewer.js';

const escalation: ApprovalRequest = {
  call_id: 'mcp-1',
  command: ['touch', '/etc/x'],
  cwd: '/work',
  unsandboxed: 'now',
  retry: false,
  reason: 'needed',
  policy_reason: 'the model asked to run it outside the sandbox (sandbox_permissions "require_escalated")',
  available_decisions: ['approved', 'approved_for_session', 'denied', 'abort'],
};
const network: ApprovalRequest = {
  call_id: 'mcp-2',
  command: ['curl', 'example.org'],
  cwd: '/work',
  retry: false,
  network_approval_context: { host: 'example.org', protocol: 'https', port: 443 },
  available_decisions: ['approved', 'approved_for_session', 'network_policy_amendment', 'denied', 'abort'],
};

const inboxOf = () =>
  new ApprovalInbox({ ruleFile: '/home/dev/.ux/rules/default.rules', pid: 42, now: () => 1000 });

afterEach(() => {
  vi.useRealTimers();
});

describe('approvalRoute', () => {
  it.each([
    ['client', true, 'client'],
    ['client', false, 'nobody'],
    ['inbox', true, 'inbox'],
    ['inbox', false, 'inbox'],
    ['client-then-inbox', true, 'client'],
    ['client-then-inbox', false, 'inbox'],
  ] as const)('approvals_via %s, client elicits %s: %s', (via, elicits, route) => {
    expect(approvalRoute(via, elicits)).toBe(route);
  });
});

describe('approvalKind', () => {
  it('names each kind of question', () => {
    expect(approvalKind(escalation)).toBe('escalation');
    expect(approvalKind(network)).toBe('network_host');
    expect(approvalKind({ ...escalation, unsandboxed: 'never' })).toBe('exec_approval');
    expect(approvalKind({ ...escalation, retry: true })).toBe('retry_without_sandbox');
    expect(approvalKind({ ...escalation, approval_id: 'exec-1' })).toBe('per_exec');
  });
});

describe('ApprovalInbox', () => {
  it('lists a question with the terminal prompt’s text and choices, and answers it by value, alias or key', async () => {
    const inbox = inboxOf();
    const events: InboxEvent[] = [];
    inbox.onChange((event) => events.push(event));
    const answer = inbox.ask(escalation, { signal: new AbortController().signal });
    const [pending] = inbox.list();
    expect(pending).toMatchObject({
      id: '42:1',
      kind: 'escalation',
      headline: 'approve this command?',
      callId: 'mcp-1',
      askedAt: 1000,
    });
    expect(pending!.expiresAt).toBeUndefined();
    expect(pending!.details).toContainEqual({ label: 'command', text: 'touch /etc/x' });
    expect(pending!.choices.map((choice) => `${choice.key}=${choice.value}`)).toEqual([
      'y=approve',
      'a=approve_for_session',
      'n=deny',
      'x=abort',
    ]);
    expect(inbox.answer('42:1', 'approve-session')).toEqual({
      id: '42:1',
      decision: 'approved_for_session',
      label: 'approve for this session',
    });
    await expect(answer).resolves.toEqual({ type: 'approved_for_session' });
    expect(inbox.list()).toEqual([]);
    expect(events.map((event) => event.type)).toEqual(['added', 'removed']);
    expect(events[1]).toEqual({
      type: 'removed',
      id: '42:1',
      reason: 'answered',
      decision: 'approved_for_session',
    });

    const second = inbox.ask(escalation, { signal: new AbortController().signal });
    inbox.answer('42:2', 'n');
    await expect(second).resolves.toEqual({ type: 'denied' });
  });

  it('refuses an unknown id and a decision the question does not offer, naming what there is', () => {
    const inbox = inboxOf();
    void inbox.ask(escalation, { signal: new AbortController().signal });
    expect(() => inbox.answer('42:9', 'approve')).toThrow('no pending question "42:9" here; pending: 42:1');
    expect(() => inbox.answer('42:1', 'deny-session')).toThrow(
      'question 42:1 does not offer "deny-session"; it offers approve, approve-session, deny, abort',
    );
    expect(inbox.list()).toHaveLength(1);
    const refused = (() => {
      try {
        inbox.answer('42:9', 'approve');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(InboxAnswerError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'approval_answer_refused', reason: 'not_found' });
  });

  it('a network question offers deny-session, which becomes the amendment', async () => {
    const inbox = inboxOf();
    const answer = inbox.ask(network, { signal: new AbortController().signal });
    expect(inbox.list()[0]!.choices.map((choice) => decisionWord(choice.value))).toEqual([
      'approve',
      'approve-session',
      'deny-session',
      'deny',
      'abort',
    ]);
    inbox.answer('42:1', 'deny-session');
    await expect(answer).resolves.toEqual({
      type: 'network_policy_amendment',
      amendment: { host: 'example.org', action: 'deny' },
    });
  });

  it('the call’s abort withdraws the question as abort', async () => {
    const inbox = inboxOf();
    const events: InboxEvent[] = [];
    inbox.onChange((event) => events.push(event));
    const controller = new AbortController();
    const answer = inbox.ask(escalation, { signal: controller.signal });
    controller.abort();
    await expect(answer).resolves.toEqual({ type: 'abort' });
    expect(inbox.list()).toEqual([]);
    expect(events.at(-1)).toEqual({ type: 'removed', id: '42:1', reason: 'cancelled' });
    expect(() => inbox.answer('42:1', 'approve')).toThrow('none is pending');
  });

  it('gives up after the timeout', async () => {
    vi.useFakeTimers();
    const inbox = inboxOf();
    const answer = inbox.ask(escalation, { signal: new AbortController().signal, timeoutMs: 5000 });
    expect(inbox.list()[0]!.expiresAt).toBe(6000);
    vi.advanceTimersByTime(5000);
    await expect(answer).resolves.toBe(TIMED_OUT);
    expect(inbox.list()).toEqual([]);
  });
});

describe('createInboxReviewer', () => {
  it('a timeout is "nobody answered within N s", which the orchestrator turns into an unattended refusal', async () => {
    vi.useFakeTimers();
    const inbox = inboxOf();
    const timedOut: string[] = [];
    const reviewer = createInboxReviewer(inbox, {
      timeoutSeconds: 1,
      onTimeout: (callId, seconds) => timedOut.push(`${callId}/${seconds}`),
    });
    const review = reviewer.review(escalation, { signal: new AbortController().signal });
    const caught = review.catch((error: unknown) => error);
    vi.advanceTimersByTime(1000);
    const error = await caught;
    expect(NoReviewerError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('nobody answered within 1 s');
    expect(timedOut).toEqual(['mcp-1/1']);
  });

  it('refuses at once when nobody can reach the inbox, leaving nothing pending', async () => {
    const inbox = inboxOf();
    const reviewer = createInboxReviewer(inbox, { unreachable: () => 'the control socket could not start' });
    await expect(reviewer.review(escalation, { signal: new AbortController().signal })).rejects.toThrow(
      'the approvals inbox cannot be reached: the control socket could not start',
    );
    expect(inbox.list()).toEqual([]);
  });
});

describe('clientThenInboxReviewer', () => {
  const client = (answer: () => Promise<{ type: 'denied' | 'approved' }>): Reviewer & { asked: number } => {
    const reviewer = {
      specificationVersion: REVIEWER_SPECIFICATION_VERSION,
      id: 'client',
      asked: 0,
      review: () => {
        reviewer.asked += 1;
        return answer();
      },
    };
    return reviewer as Reviewer & { asked: number };
  };
  const inbox: Reviewer = {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'inbox',
    review: async () => ({ type: 'approved' }),
  };

  it('takes a person’s answer from the client', async () => {
    const asker = client(async () => ({ type: 'denied' }));
    const reviewer = clientThenInboxReviewer(asker, inbox, () => false);
    await expect(reviewer.review(escalation, { signal: new AbortController().signal })).resolves.toEqual({
      type: 'denied',
    });
  });

  it('sends an automatic refusal to the inbox, and every later question straight there', async () => {
    const asker = client(async () => ({ type: 'denied' }));
    const switched: string[] = [];
    const reviewer = clientThenInboxReviewer(
      asker,
      inbox,
      () => true,
      (why) => switched.push(why),
    );
    const signal = new AbortController().signal;
    await expect(reviewer.review(escalation, { signal })).resolves.toEqual({ type: 'approved' });
    await expect(reviewer.review(escalation, { signal })).resolves.toEqual({ type: 'approved' });
    expect(asker.asked).toBe(1);
    expect(switched).toEqual(['the MCP client answers approval questions itself, too fast for a person']);
  });

  it('a client that cannot answer at all (NoReviewerError) hands over to the inbox; other failures stay failures', async () => {
    const failing = client(async () => {
      throw new NoReviewerError('elicitation failed');
    });
    const signal = new AbortController().signal;
    await expect(
      clientThenInboxReviewer(failing, inbox, () => false).review(escalation, { signal }),
    ).resolves.toEqual({
      type: 'approved',
    });
    const broken = client(async () => {
      throw new Error('bug');
    });
    await expect(
      clientThenInboxReviewer(broken, inbox, () => false).review(escalation, { signal }),
    ).rejects.toThrow('bug');
  });
});
