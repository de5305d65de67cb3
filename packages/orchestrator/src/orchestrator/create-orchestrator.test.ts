import {
  InvalidArgumentsError,
  MissingCommandLineError,
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  RejectedError,
  type ReviewDecision,
  SandboxUnavailableError,
  UnknownPluginError,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DENY_READ,
  fakeBackend,
  recordingAttempt,
  recordingReviewer,
  WORKSPACE_WRITE,
} from '../../test/fakes.js';
import { ApprovalAbortedError } from '../approval/approval-aborted-error.js';
import { createApprovalStore } from '../approval/approval-store.js';
import type {
  PermissionHook,
  PermissionHookDecision,
  PermissionHookRequest,
} from '../approval/permission-hook.js';
import { AUTO_REVIEW_TIMEOUT_REASON } from '../approval/request-approval.js';
import { createExecPolicy } from '../policy/exec-policy.js';
import { parseRulesFile } from '../policy/parse-rules-file.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { RETRY_REASON } from './attempt-loop.js';
import {
  createOrchestrator,
  type OrchestratorRequest,
  type OrchestratorSettings,
} from './create-orchestrator.js';

let bash: BashParser;
beforeAll(async () => {
  bash = await loadBashParser();
});

function setup(overrides: Partial<OrchestratorSettings> = {}) {
  const reviewer = recordingReviewer({ type: 'approved' });
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
    platform: 'linux',
    approvalPolicy: 'untrusted',
    policy: WORKSPACE_WRITE,
    reviewer,
    bashParser: bash,
    ...overrides,
  });
  return { orchestrator, reviewer: (overrides.reviewer as typeof reviewer | undefined) ?? reviewer };
}

const request = (script: string, extra: Partial<OrchestratorRequest> = {}): OrchestratorRequest => ({
  callId: 'call-1',
  argv: ['/bin/bash', '-lc', script],
  cwd: '/work/repo',
  tty: false,
  ...extra,
});

async function rejection(promise: Promise<unknown>): Promise<RejectedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!RejectedError.isInstance(error)) throw new Error(`expected a rejection, got ${String(error)}`);
  return error;
}

function hook(
  id: string,
  answer: PermissionHookDecision | Error,
): PermissionHook & { seen: PermissionHookRequest[] } {
  const seen: PermissionHookRequest[] = [];
  return {
    id,
    seen,
    async check(hookRequest) {
      seen.push(hookRequest);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

describe('the approval cache', () => {
  it('skips later prompts for the same command after approved_for_session', async () => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const { orchestrator } = setup({ reviewer });
    for (let i = 0; i < 3; i++)
      await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    expect(reviewer.requests).toHaveLength(1);
  });

  it('keys on the canonical command, so the same single command in another shell is covered', async () => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const { orchestrator } = setup({ reviewer });
    await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    await orchestrator.run(
      { ...request(''), argv: ['/usr/bin/zsh', '-c', "cargo 'test'"] },
      recordingAttempt(['ok']).attempt,
    );
    expect(reviewer.requests).toHaveLength(1);
  });

  it.each<[string, Partial<OrchestratorRequest>]>([
    ['another cwd', { cwd: '/work/other' }],
    ['a tty', { tty: true }],
    ['other sandbox permissions', { sandboxPermissions: 'use_default' }],
  ])('asks again for %s', async (_name, change) => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const { orchestrator } = setup({
      reviewer,
      approvalPolicy: 'on-request',
      // A prompt rule, so the run with default permissions asks too.
      execPolicy: createExecPolicy(
        parseRulesFile('prefix_rule(pattern=["cargo"], decision="prompt")', 'r.rules'),
      ),
    });
    const escalated = request('cargo test', { sandboxPermissions: 'require_escalated' });
    await orchestrator.run(escalated, recordingAttempt(['ok']).attempt);
    await orchestrator.run({ ...escalated, ...change }, recordingAttempt(['ok']).attempt);
    expect(reviewer.requests).toHaveLength(2);
  });

  it('asks again for other additional permissions', async () => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const store = createApprovalStore();
    const { orchestrator } = setup({ reviewer, approvalPolicy: 'on-request', approvalStore: store });
    const base = request('cargo test', {
      sandboxPermissions: 'with_additional_permissions',
      additionalPermissions: { network: { enabled: true } },
    });
    // approved_for_session is not offered for widened permissions: the answer counts as denied.
    expect((await rejection(orchestrator.run(base, recordingAttempt(['ok']).attempt))).reason).toContain(
      'rejected by the user (the answer "approved_for_session" was not offered',
    );
    expect(store.size).toBe(0);
  });

  it('does not remember a plain approval', async () => {
    const { orchestrator, reviewer } = setup();
    await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    expect(reviewer.requests).toHaveLength(2);
  });

  it('is per session: a new store asks again, a shared store does not', async () => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const store = createApprovalStore();
    await setup({ reviewer, approvalStore: store }).orchestrator.run(
      request('cargo test'),
      recordingAttempt(['ok']).attempt,
    );
    await setup({ reviewer, approvalStore: store }).orchestrator.run(
      request('cargo test'),
      recordingAttempt(['ok']).attempt,
    );
    expect(reviewer.requests).toHaveLength(1);
    await setup({ reviewer, approvalStore: createApprovalStore() }).orchestrator.run(
      request('cargo test'),
      recordingAttempt(['ok']).attempt,
    );
    expect(reviewer.requests).toHaveLength(2);
  });

  it('covers the retry prompt of a later run', async () => {
    const reviewer = recordingReviewer({ type: 'approved_for_session' });
    const { orchestrator } = setup({ reviewer, approvalPolicy: 'on-failure' });
    const first = recordingAttempt(['denied', 'ok']);
    await orchestrator.run(request('cargo test'), first.attempt);
    const second = recordingAttempt(['denied', 'ok']);
    const outcome = await orchestrator.run(request('cargo test'), second.attempt);
    expect(reviewer.requests.map((r) => r.reason)).toEqual([RETRY_REASON]);
    expect(outcome).toMatchObject({ status: 'completed', escalated: true });
    expect(second.calls.map((call) => call.sandbox)).toEqual(['fake', null]);
  });

  it('escalateOnFailure false returns the denial as it is: no question, no second attempt', async () => {
    const reviewer = recordingReviewer({ type: 'approved' });
    const { orchestrator } = setup({ reviewer, approvalPolicy: 'on-failure', escalateOnFailure: false });
    const run = recordingAttempt(['denied', 'ok']);
    const outcome = await orchestrator.run(request('cargo test'), run.attempt);
    expect(outcome).toMatchObject({ status: 'denied', attempts: 1 });
    expect(reviewer.requests).toEqual([]);
    expect(run.calls.map((call) => call.sandbox)).toEqual(['fake']);
  });

  it('never stores automatic-reviewer decisions, nor offers it session approval', async () => {
    const store = createApprovalStore();
    const escalated = request('cargo test', { sandboxPermissions: 'require_escalated' });
    const auto = recordingReviewer({ type: 'approved' }, 'guardian');
    const { orchestrator } = setup({
      approvalPolicy: 'on-request',
      autoReviewer: auto,
      approvalStore: store,
    });
    await orchestrator.run(escalated, recordingAttempt(['ok']).attempt);
    await orchestrator.run(escalated, recordingAttempt(['ok']).attempt);
    expect(auto.requests).toHaveLength(2);
    const greedy = setup({
      approvalPolicy: 'on-request',
      autoReviewer: recordingReviewer({ type: 'approved_for_session' }, 'guardian'),
      approvalStore: store,
    });
    expect(
      (await rejection(greedy.orchestrator.run(escalated, recordingAttempt([]).attempt))).reason,
    ).toContain(
      'rejected by the automatic reviewer "guardian" (the answer "approved_for_session" was not offered',
    );
    expect(store.size).toBe(0);
  });
});

describe('the reviewer chain', () => {
  it('sends hooks the command, and an allow from a hook approves without the user', async () => {
    const allow = hook('allow-all', { decision: 'allow' });
    const { orchestrator, reviewer } = setup({ permissionHooks: [allow] });
    await orchestrator.run(
      request('cargo test', { justification: 'run the tests' }),
      recordingAttempt(['ok']).attempt,
    );
    expect(reviewer.requests).toEqual([]);
    expect(allow.seen).toEqual([
      {
        tool: 'Bash',
        command: 'cargo test',
        argv: ['/bin/bash', '-lc', 'cargo test'],
        cwd: '/work/repo',
        description: 'run the tests',
        phase: 'initial',
        call_id: 'call-1',
      },
    ]);
  });

  it('a deny from any hook wins, with its message, and nothing runs', async () => {
    const { orchestrator, reviewer } = setup({
      permissionHooks: [
        hook('a', { decision: 'allow' }),
        hook('b', { decision: 'deny', message: 'not on Fridays' }),
      ],
    });
    const { attempt, calls } = recordingAttempt(['ok']);
    const error = await rejection(orchestrator.run(request('cargo test'), attempt));
    expect(error).toMatchObject({ reason: 'not on Fridays', source: 'hook' });
    expect(reviewer.requests).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('a deny without a message names the hook; a hook that throws denies', async () => {
    const silent = setup({ permissionHooks: [hook('policy-check', { decision: 'deny' })] });
    expect(
      (await rejection(silent.orchestrator.run(request('cargo test'), recordingAttempt([]).attempt))).reason,
    ).toBe('denied by permission hook "policy-check"');
    const broken = setup({ permissionHooks: [hook('flaky', new Error('socket closed'))] });
    expect(
      (await rejection(broken.orchestrator.run(request('cargo test'), recordingAttempt([]).attempt))).reason,
    ).toBe('permission hook "flaky" failed: socket closed');
  });

  it('ask leaves the decision to the user', async () => {
    const { orchestrator, reviewer } = setup({ permissionHooks: [hook('a', { decision: 'ask' })] });
    await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    expect(reviewer.requests).toHaveLength(1);
  });

  it('a hook may refuse a retry without the sandbox but cannot grant it', async () => {
    const allow = hook('allow-all', { decision: 'allow' });
    const { orchestrator, reviewer } = setup({ approvalPolicy: 'on-failure', permissionHooks: [allow] });
    await orchestrator.run(request('cargo test'), recordingAttempt(['denied', 'ok']).attempt);
    expect(allow.seen.map((seen) => seen.phase)).toEqual(['retry']);
    expect(reviewer.requests.map((r) => [r.retry, r.reason])).toEqual([[true, RETRY_REASON]]);

    const deny = setup({
      approvalPolicy: 'on-failure',
      permissionHooks: [hook('no', { decision: 'deny', message: 'no' })],
    });
    const { attempt, calls } = recordingAttempt(['denied', 'ok']);
    expect(await rejection(deny.orchestrator.run(request('cargo test'), attempt))).toMatchObject({
      source: 'hook',
    });
    expect(calls).toHaveLength(1);
  });

  it('routes on-request prompts to the automatic reviewer and untrusted prompts to the user', async () => {
    const auto = recordingReviewer({ type: 'approved' }, 'guardian');
    const onRequest = setup({ approvalPolicy: 'on-request', autoReviewer: auto });
    await onRequest.orchestrator.run(
      request('cargo test', { sandboxPermissions: 'require_escalated' }),
      recordingAttempt(['ok']).attempt,
    );
    expect(auto.requests).toHaveLength(1);
    expect(auto.requests[0]!.available_decisions).toEqual(['approved', 'denied', 'abort', 'timed_out']);
    expect(auto.requests[0]!.proposed_execpolicy_amendment).toBeUndefined();
    expect(onRequest.reviewer.requests).toEqual([]);

    const untrusted = setup({ approvalPolicy: 'untrusted', autoReviewer: auto });
    await untrusted.orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    expect(auto.requests).toHaveLength(1);
    expect(untrusted.reviewer.requests).toHaveLength(1);
    expect(untrusted.reviewer.requests[0]!.available_decisions).not.toContain('timed_out');
  });

  it('names the automatic reviewer when it refuses, and has its own timeout message', async () => {
    const escalated = request('cargo test', { sandboxPermissions: 'require_escalated' });
    const denying = setup({
      approvalPolicy: 'on-request',
      autoReviewer: recordingReviewer({ type: 'denied' }, 'guardian'),
    });
    expect(await rejection(denying.orchestrator.run(escalated, recordingAttempt([]).attempt))).toMatchObject({
      reason: 'rejected by the automatic reviewer "guardian"',
      source: 'reviewer',
    });
    const slow = setup({
      approvalPolicy: 'on-request',
      autoReviewer: recordingReviewer({ type: 'timed_out' }, 'guardian'),
    });
    expect(await rejection(slow.orchestrator.run(escalated, recordingAttempt([]).attempt))).toMatchObject({
      reason: AUTO_REVIEW_TIMEOUT_REASON,
      source: 'reviewer',
    });
  });

  it('strict auto-review reviews even what policy lets through, skips hooks, and reviews the retry again', async () => {
    const auto = recordingReviewer({ type: 'approved' }, 'guardian');
    const watcher = hook('watcher', { decision: 'allow' });
    const { orchestrator, reviewer } = setup({
      approvalPolicy: 'on-failure',
      autoReviewer: auto,
      permissionHooks: [watcher],
    });
    const { attempt, calls } = recordingAttempt(['denied', 'ok']);
    await orchestrator.run(request('ls', { strictAutoReview: true, justification: 'look around' }), attempt);
    expect(auto.requests.map((r) => [r.retry, r.reason])).toEqual([
      [false, 'look around'],
      [true, RETRY_REASON],
    ]);
    expect(watcher.seen).toEqual([]);
    expect(reviewer.requests).toEqual([]);
    expect(calls.map((call) => call.sandbox)).toEqual(['fake', null]);
  });

  it('strict auto-review without an automatic reviewer fails closed', async () => {
    const { orchestrator } = setup({ approvalPolicy: 'on-failure' });
    const { attempt, calls } = recordingAttempt(['ok']);
    const error = await rejection(orchestrator.run(request('ls', { strictAutoReview: true }), attempt));
    expect(error.reason).toContain('no automatic reviewer is configured');
    expect(calls).toEqual([]);
  });

  it('the strictAutoReview setting reviews a known-safe command of every request, without hooks', async () => {
    const watcher = hook('watcher', { decision: 'allow' });
    // Without the setting, `ls` runs without anyone being asked.
    const relaxedReviewer = recordingReviewer({ type: 'approved' }, 'guardian');
    const relaxed = setup({ approvalPolicy: 'on-request', autoReviewer: relaxedReviewer });
    const relaxedRun = recordingAttempt(['ok']);
    await relaxed.orchestrator.run(request('ls'), relaxedRun.attempt);
    expect(relaxedRun.calls).toHaveLength(1);
    expect(relaxedReviewer.requests).toEqual([]);

    const auto = recordingReviewer({ type: 'approved' }, 'guardian');
    const strict = setup({
      approvalPolicy: 'on-request',
      autoReviewer: auto,
      permissionHooks: [watcher],
      strictAutoReview: true,
    });
    const approved = recordingAttempt(['ok']);
    await strict.orchestrator.run(request('ls', { justification: 'look around' }), approved.attempt);
    expect(auto.requests).toHaveLength(1);
    expect(auto.requests[0]).toMatchObject({
      display_command: 'ls',
      reason: 'look around',
      policy_reason: 'strict automatic review: every command goes to the automatic reviewer',
      retry: false,
    });
    expect(approved.calls).toHaveLength(1);
    expect(watcher.seen).toEqual([]);
    expect(strict.reviewer.requests).toEqual([]);

    // A request that says otherwise is not strict.
    await strict.orchestrator.run(
      request('ls', { strictAutoReview: false }),
      recordingAttempt(['ok']).attempt,
    );
    expect(auto.requests).toHaveLength(1);

    const denying = setup({
      approvalPolicy: 'on-request',
      autoReviewer: recordingReviewer({ type: 'denied' }, 'guardian'),
      permissionHooks: [watcher],
      strictAutoReview: true,
    });
    const refused = recordingAttempt(['ok']);
    expect(await rejection(denying.orchestrator.run(request('ls'), refused.attempt))).toMatchObject({
      reason: 'rejected by the automatic reviewer "guardian"',
      source: 'reviewer',
    });
    expect(refused.calls).toEqual([]);
    expect(watcher.seen).toEqual([]);
    expect(denying.reviewer.requests).toEqual([]);
  });

  it('the strictAutoReview setting sends network questions to the automatic reviewer too', async () => {
    const auto = recordingReviewer({ type: 'denied' }, 'guardian');
    const { orchestrator, reviewer } = setup({ autoReviewer: auto, strictAutoReview: true });
    expect(
      await orchestrator.decideNetwork({ host: 'example.org', port: 443, protocol: 'https', cwd: '/work' }),
    ).toBe('deny');
    expect(auto.requests).toHaveLength(1);
    expect(reviewer.requests).toEqual([]);
  });

  it('the strictAutoReview setting without an automatic reviewer is refused when the orchestrator is created', () => {
    expect(() => setup({ strictAutoReview: true })).toThrow(InvalidArgumentsError);
    expect(() => setup({ strictAutoReview: true })).toThrow(
      'invalid orchestrator arguments: strictAutoReview: is true but no autoReviewer is set',
    );
    expect(() => setup({ strictAutoReview: false })).not.toThrow();
  });

  it('abort rejects and asks to interrupt the turn', async () => {
    const { orchestrator } = setup({ reviewer: recordingReviewer({ type: 'abort' }) });
    const error = await rejection(orchestrator.run(request('cargo test'), recordingAttempt([]).attempt));
    expect(ApprovalAbortedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'aborted by the user', source: 'user', interruptTurn: true });
    expect(ApprovalAbortedError.isInstance(new RejectedError({ reason: 'x', source: 'user' }))).toBe(false);
  });

  it.each<[string, ReviewDecision | unknown, string]>([
    ['a decision that was not offered', { type: 'timed_out' }, 'the answer "timed_out" was not offered'],
    [
      'a network amendment that was not offered',
      { type: 'network_policy_amendment', amendment: { host: 'x', action: 'allow' } },
      'was not offered',
    ],
    ['a malformed answer', { type: 'yes' }, 'is not a review decision'],
    [
      'another rule than the proposed one',
      { type: 'approved_execpolicy_amendment', amendment: ['cargo'] },
      'the rule ["cargo"] is not the proposed ["cargo","test"]',
    ],
  ])('treats %s as denied', async (_name, answer, problem) => {
    const { orchestrator } = setup({ reviewer: recordingReviewer(answer as ReviewDecision) });
    const { attempt, calls } = recordingAttempt(['ok']);
    const error = await rejection(orchestrator.run(request('cargo test'), attempt));
    expect(error.reason.startsWith('rejected by the user (')).toBe(true);
    expect(error.reason).toContain(problem);
    expect(calls).toEqual([]);
  });

  it('a reviewer that throws rejects', async () => {
    const reviewer = recordingReviewer([
      () => {
        throw new Error('terminal closed');
      },
    ]);
    const { orchestrator } = setup({ reviewer });
    expect(
      (await rejection(orchestrator.run(request('cargo test'), recordingAttempt([]).attempt))).reason,
    ).toBe('rejected by the user (the reviewer failed: terminal closed)');
  });

  it('passes the request signal to reviewers and attempts', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const reviewer = recordingReviewer({ type: 'approved' });
    const review = reviewer.review.bind(reviewer);
    reviewer.review = (approvalRequest, options) => {
      seen = options.signal;
      return review(approvalRequest, options);
    };
    const { orchestrator } = setup({ reviewer });
    let attemptSignal: AbortSignal | undefined;
    await orchestrator.run(
      request('cargo test', { signal: controller.signal }),
      async (_sandbox, context) => {
        attemptSignal = context.signal;
        return { value: 'ok' };
      },
    );
    expect(seen).toBe(controller.signal);
    expect(attemptSignal).toBe(controller.signal);
  });
});

describe('approved_execpolicy_amendment', () => {
  it('saves the proposed rule, and later runs of the prefix need no prompt', async () => {
    const saved: string[][] = [];
    const reviewer = recordingReviewer({
      type: 'approved_execpolicy_amendment',
      amendment: ['cargo', 'test'],
    });
    const { orchestrator } = setup({ reviewer, ruleWriter: async (prefix) => void saved.push([...prefix]) });
    await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    expect(reviewer.requests[0]!.proposed_execpolicy_amendment).toEqual(['cargo', 'test']);
    expect(saved).toEqual([['cargo', 'test']]);
    const later = recordingAttempt(['ok']);
    await orchestrator.run(request('cargo test --release'), later.attempt);
    expect(reviewer.requests).toHaveLength(1);
    // An explicit allow rule now matches: the command runs without the sandbox, as in Codex.
    expect(later.calls.map((call) => call.sandbox)).toEqual([null]);
    expect(orchestrator.execPolicy.rules.at(-1)).toMatchObject({
      pattern: ['cargo', 'test'],
      decision: 'allow',
    });
  });

  it('keeps the approval and warns when the rule cannot be saved', async () => {
    const warnings: string[] = [];
    const reviewer = recordingReviewer({
      type: 'approved_execpolicy_amendment',
      amendment: ['cargo', 'test'],
    });
    const { orchestrator } = setup({
      reviewer,
      ruleWriter: async () => {
        throw new Error('read-only file system');
      },
      onWarning: (message) => warnings.push(message),
    });
    const outcome = await orchestrator.run(request('cargo test'), recordingAttempt(['ok']).attempt);
    expect(outcome.status).toBe('completed');
    expect(warnings).toEqual([
      'the rule ["cargo","test"] applies for this session but could not be saved: read-only file system',
    ]);
  });
});

describe('sandbox selection fails closed', () => {
  it('before anyone is asked, naming what is missing and how to fix it', async () => {
    const { orchestrator, reviewer } = setup({
      sandboxRegistry: createSandboxRegistry({
        fake: fakeBackend('fake', {
          probe: { available: false, reason: 'bwrap is not installed', fix: 'apt-get install bubblewrap' },
        }),
      }),
    });
    const { attempt, calls } = recordingAttempt(['ok']);
    const error = await orchestrator.run(request('cargo test'), attempt).catch((caught: unknown) => caught);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'sandbox "fake" unavailable: bwrap is not installed; apt-get install bubblewrap',
    );
    expect(reviewer.requests).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('when no backend is registered for the platform', async () => {
    const { orchestrator } = setup({
      sandboxRegistry: createSandboxRegistry({
        seatbelt: fakeBackend('seatbelt', { platforms: ['darwin'] }),
      }),
      approvalPolicy: 'on-request',
    });
    const error = await orchestrator
      .run(request('ls'), recordingAttempt(['ok']).attempt)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'sandbox_unavailable',
      reason:
        'the policy needs a sandbox, but no registered backend can be used on linux (seatbelt runs only on darwin)',
    });
  });

  it('but an approved escalation runs without one, and deny-read never does', async () => {
    const registry = createSandboxRegistry({});
    const escalated = request('cargo test', { sandboxPermissions: 'require_escalated' });
    const plain = setup({ sandboxRegistry: registry, approvalPolicy: 'on-request' });
    const { attempt, calls } = recordingAttempt(['ok']);
    await plain.orchestrator.run(escalated, attempt);
    expect(calls.map((call) => call.sandbox)).toEqual([null]);
    const denyRead = setup({ sandboxRegistry: registry, approvalPolicy: 'on-request', policy: DENY_READ });
    await expect(
      denyRead.orchestrator.run(escalated, recordingAttempt(['ok']).attempt),
    ).rejects.toMatchObject({
      code: 'sandbox_unavailable',
    });
  });

  it('probes each backend once per orchestrator', async () => {
    const backend = fakeBackend('fake');
    const { orchestrator } = setup({
      sandboxRegistry: createSandboxRegistry({ fake: backend }),
      approvalPolicy: 'never',
    });
    for (let i = 0; i < 3; i++) await orchestrator.run(request('ls'), recordingAttempt(['ok']).attempt);
    expect(backend.probes).toBe(1);
  });

  it('rejects an enabled backend that is not registered, listing the registered ones', () => {
    expect(() => setup({ enabledBackends: ['bwarp'] })).toThrowError(
      /unknown sandbox backend "bwarp"; available: fake/,
    );
    try {
      setup({ enabledBackends: ['bwarp'] });
    } catch (error) {
      expect(UnknownPluginError.isInstance(error)).toBe(true);
    }
  });
});

describe('denials', () => {
  it('use the backend classifier first, then the heuristic', async () => {
    const verdicts = { notDenied: 'not_denied', denied: 'denied', unknown: 'unknown' } as const;
    const outcomes: string[] = [];
    for (const verdict of Object.values(verdicts)) {
      const { orchestrator } = setup({
        approvalPolicy: 'never',
        sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake', { classify: () => verdict }) }),
      });
      const outcome = await orchestrator.run(
        request('ls'),
        recordingAttempt([{ exitCode: 1, output: 'sandbox: blocked' }]).attempt,
      );
      outcomes.push(outcome.status);
    }
    expect(outcomes).toEqual(['completed', 'denied', 'denied']);
  });
});

describe('requests', () => {
  it.each<[string, Partial<OrchestratorRequest>, string]>([
    [
      'a relative cwd',
      { cwd: 'repo' },
      'invalid exec_command arguments: cwd: must be an absolute path, got "repo"',
    ],
    ['an empty call id', { callId: '' }, 'invalid exec_command arguments: callId: must not be empty'],
    [
      'missing additional permissions',
      { sandboxPermissions: 'with_additional_permissions' },
      'additional_permissions: is required with sandbox_permissions "with_additional_permissions"',
    ],
    [
      'additional permissions without asking for them',
      { additionalPermissions: { network: { enabled: true } } },
      'additional_permissions: is only allowed with sandbox_permissions "with_additional_permissions"',
    ],
  ])('refuses %s', async (_name, change, message) => {
    const { orchestrator } = setup({ approvalPolicy: 'on-request' });
    const error = await orchestrator
      .run({ ...request('ls'), ...change }, recordingAttempt([]).attempt)
      .catch((e: unknown) => e);
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(message);
  });

  it('refuses an empty argv', async () => {
    const { orchestrator } = setup();
    const error = await orchestrator
      .run({ ...request('ls'), argv: [] }, recordingAttempt([]).attempt)
      .catch((e: unknown) => e);
    expect(MissingCommandLineError.isInstance(error)).toBe(true);
  });

  it('passes errors from the attempt through unchanged', async () => {
    const { orchestrator } = setup({ approvalPolicy: 'never' });
    const failure = new Error('spawn failed');
    await expect(
      orchestrator.run(request('ls'), async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });

  it('accepts the classic sandbox policy', async () => {
    const { orchestrator } = setup({ approvalPolicy: 'never', policy: { type: 'danger-full-access' } });
    const { attempt, calls } = recordingAttempt(['ok']);
    await orchestrator.run(request('ls'), attempt);
    expect(calls.map((call) => call.sandbox)).toEqual([null]);
  });

  it('explains a requirement without asking or running', async () => {
    const { orchestrator, reviewer } = setup({
      execPolicy: createExecPolicy(
        parseRulesFile('prefix_rule(pattern=["git","push"], decision="forbidden")', 'r.rules'),
      ),
    });
    expect(await orchestrator.requirement(request('git push'))).toEqual({
      type: 'forbidden',
      reason: '`git push` rejected: policy forbids commands starting with `git push`',
      byRule: true,
    });
    // Run, the refusal says a rule decided (the model reads `refusal.decided_by: "rule"`).
    const refused = await rejection(orchestrator.run(request('git push'), recordingAttempt(['ok']).attempt));
    expect(refused).toMatchObject({ source: 'policy', decidedBy: 'rule' });
    expect(await orchestrator.requirement(request('ls'))).toEqual({
      type: 'skip',
      bypassSandbox: false,
      proposedAmendment: ['ls'],
    });
    expect(reviewer.requests).toEqual([]);
  });

  it('loads the bash parser itself when none is given', async () => {
    const orchestrator = createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ fake: fakeBackend('fake') }),
      approvalPolicy: 'untrusted',
      policy: WORKSPACE_WRITE,
      reviewer: recordingReviewer({ type: 'approved' }),
    });
    expect(await orchestrator.requirement(request('ls && pwd'))).toMatchObject({ type: 'skip' });
    expect(orchestrator.sandboxes.candidates.map((backend) => backend.id)).toEqual(
      process.platform === 'linux' ? ['fake'] : [],
    );
  });
});

describe('what an approval request tells the person asked', () => {
  it('shows the command as typed and why policy asks', async () => {
    const { orchestrator, reviewer } = setup({ approvalPolicy: 'untrusted' });
    await orchestrator.run(request('touch /var/tmp/x'), recordingAttempt(['ok']).attempt);
    expect(reviewer.requests[0]).toMatchObject({
      command: ['/bin/bash', '-lc', 'touch /var/tmp/x'],
      display_command: 'touch /var/tmp/x',
      policy_reason: 'approval policy "untrusted": `touch /var/tmp/x` is not a known read-only command',
    });
  });

  it('says that approving may rerun the command without the sandbox after a denial, without asking', async () => {
    const { orchestrator, reviewer } = setup({ approvalPolicy: 'untrusted' });
    const { attempt, calls } = recordingAttempt(['denied', 'ok']);
    const outcome = await orchestrator.run(request('touch /var/tmp/x'), attempt);
    expect(reviewer.requests).toHaveLength(1);
    expect(reviewer.requests[0]).toMatchObject({ retry: false, unsandboxed: 'after_denial' });
    expect(calls.map((call) => call.sandbox)).toEqual(['fake', null]);
    expect(outcome).toMatchObject({ status: 'completed', escalated: true, sandbox: null });
  });

  it('says when approving runs it outside the sandbox at once, and when never', async () => {
    const escalated = setup({ approvalPolicy: 'on-request' });
    await escalated.orchestrator.run(
      request('curl x', { sandboxPermissions: 'require_escalated', justification: 'fetch it' }),
      recordingAttempt(['ok']).attempt,
    );
    expect(escalated.reviewer.requests[0]).toMatchObject({
      unsandboxed: 'now',
      reason: 'fetch it',
      policy_reason:
        'the model asked to run it outside the sandbox (sandbox_permissions "require_escalated")',
    });
    const hidden = setup({ approvalPolicy: 'untrusted', policy: DENY_READ });
    await hidden.orchestrator.run(request('touch x'), recordingAttempt(['ok']).attempt);
    expect(hidden.reviewer.requests[0]).toMatchObject({
      unsandboxed: 'never',
      amendment_unsandboxed: false,
    });
  });

  it('asks a retry with the denial as the reason and "now" when it runs unsandboxed', async () => {
    const { orchestrator, reviewer } = setup({ approvalPolicy: 'on-failure' });
    await orchestrator.run(request('touch /etc/x'), recordingAttempt(['denied', 'ok']).attempt);
    expect(reviewer.requests[0]).toMatchObject({
      retry: true,
      unsandboxed: 'now',
      policy_reason: 'the sandbox blocked it (touch: cannot touch /etc/x: Permission denied)',
      proposed_execpolicy_amendment: ['touch', '/etc/x'],
      amendment_unsandboxed: true,
    });
  });

  it('tells "no one could be asked" apart from a person saying no', async () => {
    const { orchestrator } = setup({
      reviewer: {
        specificationVersion: REVIEWER_SPECIFICATION_VERSION,
        id: 'nobody',
        review: async () => {
          throw new NoReviewerError('stdin is not a terminal');
        },
      },
    });
    const error = await rejection(orchestrator.run(request('touch x'), recordingAttempt([]).attempt));
    expect(error).toMatchObject({
      reason: 'no one could be asked for approval (stdin is not a terminal)',
      source: 'unattended',
    });
    const denied = setup({ reviewer: recordingReviewer({ type: 'denied' }) });
    expect(
      (await rejection(denied.orchestrator.run(request('touch x'), recordingAttempt([]).attempt))).reason,
    ).toBe('rejected by the user');
  });
});
