import type { ApprovalPolicy, EffectivePolicy } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import type { CliSession } from './cli-session.js';
import {
  mcpAsker,
  mcpListedTool,
  mcpToolAnnotations,
  NO_ELICITATION_WHY,
  noSessionPolicyChanges,
  recordSessionPolicyChange,
} from './mcp-policy-words.js';

/** The parts of a session `mcpAsker` reads. */
function sessionWith(
  approvalPolicy: ApprovalPolicy,
  review: { reviewer?: 'user' | 'auto_review'; strict?: boolean; autoReview?: boolean } = {},
): CliSession {
  return {
    settings: { approvalPolicy: { value: approvalPolicy, source: 'test' } },
    review: {
      hooks: [],
      approvalsReviewer: { value: review.reviewer ?? 'user', source: 'test' },
      strict: { value: review.strict ?? false, source: 'test' },
      ...(review.autoReview ? { autoReview: { command: ['review'], timeoutMs: 1000 } } : {}),
    },
  } as unknown as CliSession;
}

describe('mcpAsker', () => {
  it('the person when the client can elicit, nobody when it cannot, nobody under never', () => {
    expect(mcpAsker(sessionWith('on-request'), true)).toEqual({ kind: 'person' });
    expect(mcpAsker(sessionWith('on-request'), false)).toEqual({ kind: 'nobody', why: NO_ELICITATION_WHY });
    expect(mcpAsker(sessionWith('never'), true)).toEqual({ kind: 'nobody', why: 'approval policy never' });
  });

  it('the automatic reviewer where createCliDoor routes approvals to it, even without elicitation', () => {
    const routed = sessionWith('on-request', { reviewer: 'auto_review', autoReview: true });
    expect(mcpAsker(routed, false)).toEqual({ kind: 'automatic_reviewer' });
    // approvals_reviewer applies to on-request and granular only; strict applies to every policy.
    expect(mcpAsker(sessionWith('untrusted', { reviewer: 'auto_review', autoReview: true }), true)).toEqual({
      kind: 'person',
    });
    expect(mcpAsker(sessionWith('untrusted', { strict: true, autoReview: true }), false)).toEqual({
      kind: 'automatic_reviewer',
    });
  });
});

describe('recordSessionPolicyChange', () => {
  it('reports only what changes the text: a new host answer, a new prefix', () => {
    const changes = noSessionPolicyChanges();
    expect(recordSessionPolicyChange(changes, { kind: 'host', host: 'a.test', decision: 'allowed' })).toBe(
      true,
    );
    expect(recordSessionPolicyChange(changes, { kind: 'host', host: 'a.test', decision: 'allowed' })).toBe(
      false,
    );
    expect(recordSessionPolicyChange(changes, { kind: 'host', host: 'a.test', decision: 'refused' })).toBe(
      true,
    );
    expect([...changes.hosts]).toEqual([['a.test', 'refused']]);
    expect(recordSessionPolicyChange(changes, { kind: 'prefix', prefix: ['npm', 'install'] })).toBe(true);
    expect(recordSessionPolicyChange(changes, { kind: 'prefix', prefix: ['npm', 'install'] })).toBe(false);
    expect(recordSessionPolicyChange(changes, { kind: 'prefix', prefix: ['npm'] })).toBe(true);
    expect(changes.prefixes).toEqual([['npm', 'install'], ['npm']]);
  });
});

describe('mcpToolAnnotations', () => {
  const sandboxed = (network: EffectivePolicy['network']): EffectivePolicy => ({
    fileSystem: { kind: 'restricted', entries: [] },
    network,
  });

  it('never read-only or idempotent; the open world only with a network, no sandbox or a remote environment', () => {
    expect(mcpToolAnnotations('exec_command', sandboxed('restricted'), false)).toEqual({
      title: 'Run a shell command',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(mcpToolAnnotations('write_stdin', sandboxed('proxied'), false)?.openWorldHint).toBe(true);
    expect(mcpToolAnnotations('shell_command', sandboxed('enabled'), false)?.openWorldHint).toBe(true);
    expect(mcpToolAnnotations('exec_command', sandboxed('restricted'), true)?.openWorldHint).toBe(true);
    expect(
      mcpToolAnnotations(
        'exec_command',
        { fileSystem: { kind: 'external-sandbox' }, network: 'restricted' },
        false,
      )?.openWorldHint,
    ).toBe(true);
    expect(mcpToolAnnotations('apply_patch', sandboxed('restricted'), false)).toBeUndefined();
  });
});

describe('mcpListedTool', () => {
  it('adds the policy to the tool that runs commands, not to write_stdin', () => {
    const tool = {
      name: 'exec_command',
      description: 'Run a shell command.',
      parameters: { type: 'object' },
    };
    expect(mcpListedTool(tool, 'POLICY', undefined)).toEqual({
      name: 'exec_command',
      description: 'Run a shell command.\n\nPOLICY',
      inputSchema: { type: 'object' },
    });
    const stdin = { name: 'write_stdin', description: 'Write.', parameters: { type: 'object' } };
    expect(mcpListedTool(stdin, 'POLICY', undefined).description).toBe('Write.');
  });
});
