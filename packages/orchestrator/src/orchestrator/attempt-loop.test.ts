import { type ApprovalPolicy, RejectedError, SandboxDeniedError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { fakeBackend, PERMISSION_DENIED, WORKSPACE_WRITE } from '../../test/fakes.js';
import type { Attempt, AttemptResult, SelectedSandbox } from './attempt.js';
import {
  type AttemptLoop,
  decideRetry,
  RETRY_REASON,
  type RetryGateInput,
  runAttempts,
  wantsNoSandboxApproval,
} from './attempt-loop.js';

const granular = (sandbox_approval: boolean): ApprovalPolicy => ({
  granular: {
    sandbox_approval,
    rules: true,
    skill_approval: true,
    request_permissions: true,
    mcp_elicitations: true,
  },
});

const gates = (overrides: Partial<RetryGateInput> = {}): RetryGateInput => ({
  approvalPolicy: 'on-failure',
  denyRead: false,
  alreadyApproved: false,
  strictAutoReview: false,
  escalateOnFailure: true,
  fileSystemRestricted: true,
  ...overrides,
});
const HOST = { host: 'example.com', protocol: 'https' };

describe('wantsNoSandboxApproval', () => {
  it.each<[ApprovalPolicy, boolean]>([
    ['untrusted', true],
    ['on-failure', true],
    ['on-request', false],
    ['never', false],
    [granular(true), true],
    [granular(false), false],
  ])('%j → %s', (policy, expected) => {
    expect(wantsNoSandboxApproval(policy)).toBe(expected);
  });
});

describe('decideRetry: the gates in order', () => {
  it('1. a network block without a host to ask about is returned', () => {
    expect(decideRetry(gates({ networkDenial: { context: null } }))).toEqual({
      retry: false,
      gate: 'network',
    });
  });

  it('2. a tool that does not escalate returns the denial', () => {
    expect(decideRetry(gates({ escalateOnFailure: false }))).toEqual({ retry: false, gate: 'escalate' });
  });

  it('3. only policies that may ask to drop the sandbox go on', () => {
    for (const approvalPolicy of ['on-request', 'never', granular(false)] as ApprovalPolicy[]) {
      expect(decideRetry(gates({ approvalPolicy }))).toEqual({ retry: false, gate: 'policy' });
    }
    for (const approvalPolicy of ['untrusted', 'on-failure', granular(true)] as ApprovalPolicy[]) {
      expect(decideRetry(gates({ approvalPolicy })).retry).toBe(true);
    }
  });

  it('3. on-request may still ask about a blocked host when the file system is restricted', () => {
    const networkDenial = { context: HOST };
    expect(decideRetry(gates({ approvalPolicy: 'on-request', networkDenial }))).toEqual({
      retry: true,
      ask: true,
      reason: 'Network access to "example.com" is blocked by policy.',
      sandbox: 'none',
      networkContext: HOST,
    });
    expect(
      decideRetry(gates({ approvalPolicy: 'on-request', networkDenial, fileSystemRestricted: false })),
    ).toEqual({
      retry: false,
      gate: 'policy',
    });
    expect(decideRetry(gates({ approvalPolicy: 'never', networkDenial }))).toEqual({
      retry: false,
      gate: 'policy',
    });
  });

  it('4. deny-read never drops the sandbox', () => {
    expect(decideRetry(gates({ denyRead: true }))).toEqual({ retry: false, gate: 'deny_read' });
  });

  it('4. deny-read retries a network block inside the same sandbox', () => {
    expect(decideRetry(gates({ denyRead: true, networkDenial: { context: HOST } }))).toMatchObject({
      retry: true,
      sandbox: 'same',
    });
  });

  it('5. asks again unless already approved; strict auto-review and network blocks always ask', () => {
    expect(decideRetry(gates())).toEqual({
      retry: true,
      ask: true,
      reason: RETRY_REASON,
      sandbox: 'none',
      networkContext: null,
    });
    expect(decideRetry(gates({ alreadyApproved: true }))).toMatchObject({ retry: true, ask: false });
    expect(decideRetry(gates({ alreadyApproved: true, strictAutoReview: true }))).toMatchObject({
      ask: true,
    });
    expect(decideRetry(gates({ alreadyApproved: true, networkDenial: { context: HOST } }))).toMatchObject({
      ask: true,
    });
  });

  it('uses the exact retry reason', () => {
    expect(RETRY_REASON).toBe('command failed; retry without sandbox?');
  });
});

describe('runAttempts', () => {
  const sandbox: SelectedSandbox = { backend: fakeBackend('fake'), policy: WORKSPACE_WRITE };

  function loop(
    results: AttemptResult<string>[],
    overrides: Partial<AttemptLoop<string>> & { gateOverrides?: Partial<RetryGateInput> } = {},
  ) {
    const calls: { sandbox: string | null; attempt: number; signal?: AbortSignal }[] = [];
    const retries: { reason: string; network: unknown }[] = [];
    const attempt: Attempt<string> = async (selected, context) => {
      calls.push({
        sandbox: selected?.backend.id ?? null,
        attempt: context.attempt,
        ...(context.signal ? { signal: context.signal } : {}),
      });
      return results[calls.length - 1]!;
    };
    const { gateOverrides, ...rest } = overrides;
    const input: AttemptLoop<string> = {
      firstSandbox: sandbox,
      attempt,
      callId: 'call-1',
      gates: gates(gateOverrides),
      isDenial: (_sandbox, evidence) => evidence.output.includes('Permission denied'),
      approveRetry: async ({ reason, networkContext: network }) => {
        retries.push({ reason, network });
      },
      ...rest,
    };
    return { run: () => runAttempts(input), calls, retries };
  }
  const denied: AttemptResult<string> = { value: 'denied run', earlyExit: PERMISSION_DENIED };

  it('returns a first run that did not exit early', async () => {
    const { run, calls } = loop([{ value: 'live' }]);
    expect(await run()).toEqual({
      status: 'completed',
      value: 'live',
      sandbox,
      attempts: 1,
      escalated: false,
    });
    expect(calls).toEqual([{ sandbox: 'fake', attempt: 1 }]);
  });

  it('returns an early exit that is not a denial', async () => {
    const { run, calls } = loop([{ value: 'exited', earlyExit: { exitCode: 3, output: 'boom' } }]);
    expect(await run()).toMatchObject({ status: 'completed', value: 'exited', attempts: 1 });
    expect(calls).toHaveLength(1);
  });

  it('never treats an unsandboxed early exit as a denial', async () => {
    const { run, calls } = loop([denied], { firstSandbox: null });
    expect(await run()).toEqual({
      status: 'completed',
      value: 'denied run',
      sandbox: null,
      attempts: 1,
      escalated: false,
    });
    expect(calls).toEqual([{ sandbox: null, attempt: 1 }]);
  });

  it('returns the denial when a gate stops the retry', async () => {
    const { run, calls, retries } = loop([denied], { gateOverrides: { approvalPolicy: 'on-request' } });
    const outcome = await run();
    expect(outcome).toMatchObject({ status: 'denied', value: 'denied run', sandbox, attempts: 1 });
    if (outcome.status !== 'denied') throw new Error('expected a denial');
    expect(SandboxDeniedError.isInstance(outcome.denial)).toBe(true);
    expect(outcome.denial).toMatchObject({
      sandboxType: 'fake',
      exitCode: 1,
      output: PERMISSION_DENIED.output,
    });
    expect(calls).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('asks, then retries unsandboxed', async () => {
    const signal = new AbortController().signal;
    const { run, calls, retries } = loop([denied, { value: 'second' }], { signal });
    expect(await run()).toEqual({
      status: 'completed',
      value: 'second',
      sandbox: null,
      attempts: 2,
      escalated: true,
    });
    expect(calls).toEqual([
      { sandbox: 'fake', attempt: 1, signal },
      { sandbox: null, attempt: 2, signal },
    ]);
    expect(retries).toEqual([{ reason: RETRY_REASON, network: null }]);
  });

  it('retries without asking when already approved', async () => {
    const { run, calls, retries } = loop([denied, { value: 'second' }], {
      gateOverrides: { alreadyApproved: true },
    });
    expect(await run()).toMatchObject({ status: 'completed', attempts: 2 });
    expect(calls.map((call) => call.sandbox)).toEqual(['fake', null]);
    expect(retries).toEqual([]);
  });

  it('stops when the retry is refused, with one attempt made', async () => {
    const { run, calls } = loop([denied, { value: 'never' }], {
      approveRetry: async () => {
        throw new RejectedError({ reason: 'rejected by the user', source: 'user' });
      },
    });
    await expect(run()).rejects.toMatchObject({ reason: 'rejected by the user' });
    expect(calls).toHaveLength(1);
  });

  it('returns a second denial as it is, never a third attempt', async () => {
    // A network block lets deny-read retry inside the same sandbox, where it can be denied again.
    const sameSandbox = loop(
      [
        { ...denied, networkDenial: { context: HOST } },
        { value: 'denied again', earlyExit: PERMISSION_DENIED },
      ],
      { gateOverrides: { denyRead: true } },
    );
    const outcome = await sameSandbox.run();
    expect(outcome).toMatchObject({ status: 'denied', value: 'denied again', sandbox, attempts: 2 });
    expect(sameSandbox.calls.map((call) => call.sandbox)).toEqual(['fake', 'fake']);
    expect(sameSandbox.retries).toEqual([
      { reason: 'Network access to "example.com" is blocked by policy.', network: HOST },
    ]);
  });

  it('completes an unsandboxed retry whatever it prints', async () => {
    const { run } = loop([denied, { value: 'second', earlyExit: PERMISSION_DENIED }]);
    expect(await run()).toMatchObject({
      status: 'completed',
      value: 'second',
      sandbox: null,
      escalated: true,
    });
  });

  it('returns a network block without a host as a denial', async () => {
    const { run, calls } = loop([{ ...denied, networkDenial: { context: null } }]);
    expect(await run()).toMatchObject({ status: 'denied', attempts: 1 });
    expect(calls).toHaveLength(1);
  });
});
