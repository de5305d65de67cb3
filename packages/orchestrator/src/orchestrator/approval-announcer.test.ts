import type { ApprovalRequest } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { createApprovalAnnouncer } from './approval-announcer.js';

const question = {
  call_id: 'c',
  command: ['ls'],
  cwd: '/work',
  policy_reason: 'why',
  unsandboxed: 'never',
  retry: false,
  available_decisions: ['approved', 'denied'],
} as unknown as ApprovalRequest;

describe('createApprovalAnnouncer', () => {
  it('gives each listener its own copy, and stops after unsubscribe', () => {
    const announcer = createApprovalAnnouncer();
    const seen: ApprovalRequest[] = [];
    const unsubscribe = announcer.subscribe((request) => {
      request.command.push('changed');
      seen.push(request);
    });
    announcer.subscribe((request) => seen.push(request));
    announcer.announce(question);
    expect(seen.map((request) => request.command)).toEqual([['ls', 'changed'], ['ls']]);
    expect(question.command).toEqual(['ls']);
    unsubscribe();
    announcer.announce(question);
    expect(seen).toHaveLength(3);
  });

  it('reports a listener that throws and still tells the others', () => {
    const warnings: string[] = [];
    const announcer = createApprovalAnnouncer((message) => warnings.push(message));
    let told = 0;
    announcer.subscribe(() => {
      throw new Error('boom');
    });
    announcer.subscribe(() => told++);
    announcer.announce(question);
    expect(told).toBe(1);
    expect(warnings).toEqual(['an approval listener threw: boom']);
  });
});
