import { describe, expect, it } from 'vitest';
import {
  buildApprovalRequest,
  type CommandQuestion,
  displayedCommand,
  permissionHookRequest,
} from './build-approval-request.js';
import type { OrchestratorRequest } from './orchestrator-request.js';

const request: OrchestratorRequest = {
  callId: 'call-1',
  turnId: 'turn-1',
  argv: ['/bin/bash', '-lc', 'cargo test'],
  cwd: '/work/repo',
  tty: false,
  justification: 'run the tests',
};
const initial: CommandQuestion = {
  phase: 'initial',
  reason: 'run the tests',
  policyReason: 'untrusted asks',
  unsandboxed: 'never',
  hooks: 'allow_and_deny',
};

describe('buildApprovalRequest', () => {
  it('tells the command as typed, why policy asks, and offers the proposed rule to the user', () => {
    expect(
      buildApprovalRequest({
        request,
        question: initial,
        amendment: ['cargo', 'test'],
        denyRead: false,
        reviewer: 'user',
      }),
    ).toEqual({
      call_id: 'call-1',
      turn_id: 'turn-1',
      command: ['/bin/bash', '-lc', 'cargo test'],
      display_command: 'cargo test',
      cwd: '/work/repo',
      reason: 'run the tests',
      policy_reason: 'untrusted asks',
      unsandboxed: 'never',
      retry: false,
      proposed_execpolicy_amendment: ['cargo', 'test'],
      amendment_unsandboxed: true,
      available_decisions: [
        'approved',
        'approved_for_session',
        'approved_execpolicy_amendment',
        'denied',
        'abort',
      ],
    });
  });

  it('names the execution environment, from environmentId or the deprecated environment', () => {
    for (const where of [{ environmentId: 'box' }, { environment: 'box' }])
      expect(
        buildApprovalRequest({
          request: { ...request, ...where },
          question: initial,
          amendment: undefined,
          denyRead: false,
          reviewer: 'user',
        }).environment_id,
      ).toBe('box');
  });

  it('offers no rule to the automatic reviewer, for a network question, or with additional permissions', () => {
    const auto = buildApprovalRequest({
      request,
      question: initial,
      amendment: ['cargo'],
      denyRead: false,
      reviewer: 'auto',
    });
    expect(auto.proposed_execpolicy_amendment).toBeUndefined();
    expect(auto.available_decisions).toEqual(['approved', 'denied', 'abort', 'timed_out']);
    const network = buildApprovalRequest({
      request,
      question: { ...initial, phase: 'retry', networkContext: { host: 'example.com', protocol: 'https' } },
      amendment: ['cargo'],
      denyRead: false,
      reviewer: 'user',
    });
    expect(network.proposed_execpolicy_amendment).toBeUndefined();
    expect(network.network_approval_context).toEqual({ host: 'example.com', protocol: 'https' });
    expect(network.retry).toBe(true);
    const additional = buildApprovalRequest({
      request: {
        ...request,
        sandboxPermissions: 'with_additional_permissions',
        additionalPermissions: { network: { enabled: true } },
      },
      question: initial,
      amendment: ['cargo'],
      denyRead: false,
      reviewer: 'user',
    });
    expect(additional.proposed_execpolicy_amendment).toBeUndefined();
    expect(additional.additional_permissions).toEqual({ network: { enabled: true } });
  });

  it('says a saved rule keeps the sandbox under deny-read', () => {
    const denyRead = buildApprovalRequest({
      request,
      question: initial,
      amendment: ['cargo'],
      denyRead: true,
      reviewer: 'user',
    });
    expect(denyRead.amendment_unsandboxed).toBe(false);
  });
});

describe('permissionHookRequest and displayedCommand', () => {
  it('give hooks the script as typed, or the quoted argv of a plain program', () => {
    expect(permissionHookRequest(request, 'retry')).toEqual({
      tool: 'Bash',
      command: 'cargo test',
      argv: ['/bin/bash', '-lc', 'cargo test'],
      cwd: '/work/repo',
      description: 'run the tests',
      phase: 'retry',
      call_id: 'call-1',
    });
    expect(displayedCommand(['/usr/bin/printf', 'a b'])).toBe("/usr/bin/printf 'a b'");
  });
});
