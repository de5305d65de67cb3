import { describe, expect, it } from 'vitest';
import { fakeBackend, WORKSPACE_WRITE } from '../../test/fakes.js';
import type { CommandQuestion } from './build-approval-request.js';
import { initialApproval, unsandboxedOnApproval } from './initial-approval.js';

const sandbox = { backend: fakeBackend('bwrap'), policy: WORKSPACE_WRITE };
const gates = {
  approvalPolicy: 'on-failure' as const,
  denyRead: false,
  strictAutoReview: false,
  escalateOnFailure: true,
  fileSystemRestricted: true,
};

function recorder() {
  const questions: CommandQuestion[] = [];
  return { questions, ask: async (question: CommandQuestion) => void questions.push(question) };
}

describe('initialApproval', () => {
  it('asks about a command that needs approval, hooks first, with the rule’s reason before the model’s', async () => {
    const { questions, ask } = recorder();
    const approved = await initialApproval({
      requirement: { type: 'needs_approval', reason: 'rule says', policyReason: 'dangerous' },
      strictAutoReview: false,
      justification: 'model says',
      firstSandbox: sandbox,
      gates,
      ask,
    });
    expect(approved).toBe(true);
    expect(questions).toEqual([
      {
        phase: 'initial',
        reason: 'rule says',
        policyReason: 'dangerous',
        unsandboxed: 'after_denial',
        hooks: 'allow_and_deny',
      },
    ]);
  });

  it('asks nobody about a command policy lets through, unless review is strict (then without hooks)', async () => {
    const relaxed = recorder();
    expect(
      await initialApproval({
        requirement: { type: 'skip', bypassSandbox: false },
        strictAutoReview: false,
        justification: undefined,
        firstSandbox: sandbox,
        gates,
        ask: relaxed.ask,
      }),
    ).toBe(false);
    expect(relaxed.questions).toEqual([]);

    const strict = recorder();
    expect(
      await initialApproval({
        requirement: { type: 'skip', bypassSandbox: false },
        strictAutoReview: true,
        justification: 'model says',
        firstSandbox: null,
        gates: { ...gates, strictAutoReview: true },
        ask: strict.ask,
      }),
    ).toBe(true);
    expect(strict.questions).toMatchObject([{ reason: 'model says', unsandboxed: 'now', hooks: 'skip' }]);
  });

  it('passes a refusal on', async () => {
    await expect(
      initialApproval({
        requirement: { type: 'needs_approval', policyReason: 'dangerous' },
        strictAutoReview: false,
        justification: undefined,
        firstSandbox: sandbox,
        gates,
        ask: async () => {
          throw new Error('refused');
        },
      }),
    ).rejects.toThrow('refused');
  });
});

describe('unsandboxedOnApproval', () => {
  it('is now without a sandbox, after a denial when the retry gates would not ask again, else never', () => {
    expect(unsandboxedOnApproval(null, gates)).toBe('now');
    expect(unsandboxedOnApproval(sandbox, gates)).toBe('after_denial');
    expect(unsandboxedOnApproval(sandbox, { ...gates, approvalPolicy: 'never' })).toBe('never');
    expect(unsandboxedOnApproval(sandbox, { ...gates, denyRead: true })).toBe('never');
    expect(unsandboxedOnApproval(sandbox, { ...gates, strictAutoReview: true })).toBe('never');
  });
});
