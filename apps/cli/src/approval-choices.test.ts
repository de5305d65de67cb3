import type { ApprovalRequest } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { approvalChoices } from './approval-choices.js';
import { approvalDetails, approvalHeadline } from './approval-text.js';

const network: ApprovalRequest = {
  call_id: 'network-1',
  approval_id: '1',
  command: [],
  display_command: 'connect to example.org:443 (HTTP CONNECT)',
  cwd: '/work',
  reason: '"example.org" is not in the sandbox\'s network allow list',
  unsandboxed: 'never',
  retry: false,
  network_approval_context: { host: 'example.org', port: 443, protocol: 'https' },
  available_decisions: ['approved', 'approved_for_session', 'network_policy_amendment', 'denied', 'abort'],
};

describe('a network question', () => {
  it('asks about the host, not a command', () => {
    expect(approvalHeadline(network)).toBe('a sandboxed command wants to reach example.org:443; allow it?');
    expect(approvalDetails(network)).toEqual([
      { label: 'host', text: 'connect to example.org:443 (HTTP CONNECT)' },
      { label: 'in', text: '/work' },
      { label: 'why', text: '"example.org" is not in the sandbox\'s network allow list' },
      {
        label: 'sandbox',
        text: "approving lets sandboxed commands reach example.org through ux's proxy (once, or for this session); nothing else of the sandbox changes",
      },
    ]);
  });

  it('offers allow once, allow or deny the host for the session, deny, abort', () => {
    expect(approvalChoices(network).map((choice) => [choice.key, choice.label, choice.decision])).toEqual([
      ['y', 'allow this connection', { type: 'approved' }],
      ['a', 'allow example.org for this session', { type: 'approved_for_session' }],
      [
        'd',
        'deny example.org for this session',
        { type: 'network_policy_amendment', amendment: { host: 'example.org', action: 'deny' } },
      ],
      ['n', 'deny this connection', { type: 'denied' }],
      ['x', 'abort (deny, and ask no more about this host)', { type: 'abort' }],
    ]);
  });

  it('offers only what the request allows', () => {
    const narrow = {
      ...network,
      available_decisions: ['approved', 'denied'] as ApprovalRequest['available_decisions'],
    };
    expect(approvalChoices(narrow).map((choice) => choice.key)).toEqual(['y', 'n']);
  });
});

describe('a per-exec question (a program the zsh fork intercepted)', () => {
  const perExec: ApprovalRequest = {
    call_id: 'c1',
    approval_id: '7',
    command: ['/usr/bin/touch', 'two'],
    display_command: 'touch two',
    parent_command: 'echo a; touch two; echo b',
    cwd: '/work',
    policy_reason: '`/usr/bin/touch two` requires approval by policy (a program the command runs)',
    unsandboxed: 'now',
    retry: false,
    available_decisions: ['approved', 'abort'],
  };

  it('names the command that runs the program', () => {
    expect(approvalHeadline(perExec)).toBe('a running command wants to start this program; allow it?');
    expect(approvalDetails(perExec).slice(0, 3)).toEqual([
      { label: 'program', text: 'touch two' },
      { label: 'run by', text: 'echo a; touch two; echo b' },
      { label: 'in', text: '/work' },
    ]);
    const { parent_command: _, ...without } = perExec;
    expect(approvalDetails(without).map((detail) => detail.label)).not.toContain('run by');
  });

  it('shows a parent command holding control characters as escapes, and says so', () => {
    const details = approvalDetails({ ...perExec, parent_command: 'echo a\r\u001b[2Kls' });
    expect(details.find((detail) => detail.label === 'run by')?.text).toBe('echo a\\r\\e[2Kls');
    expect(details.find((detail) => detail.label === 'note')?.text).toMatch(/^the command running it holds/);
  });

  it('offers approve or abort, and abort says it ends the command', () => {
    expect(approvalChoices(perExec).map((choice) => [choice.key, choice.label, choice.title])).toEqual([
      ['y', 'approve once', 'Approve once'],
      ['x', 'abort (refuse it and end the command)', 'Abort (refuse it and end the command)'],
    ]);
    // A whole command's abort keeps its words.
    const { approval_id: _, ...whole } = perExec;
    expect(approvalChoices(whole).at(-1)?.label).toBe('abort (stop waiting for this command)');
  });
});
