import type { ApprovalRequest } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { approvalChoices } from './approval-choices.js';
import { approvalDetails, approvalHeadline, ruleEffect } from './approval-text.js';

// What a sandboxed command or a model can choose, each a way to rewrite a terminal: a carriage
// return and erase-line/cursor-up escapes that print a forged line over the real one, a title and a
// clear-screen, a newline that starts a line of its own, a right-to-left override.
const FORGED = 'touch x #\r\x1b[2K\x1b[1A\x1b[2K  command: ls -la';
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;

function execRequest(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    call_id: 'c1',
    command: ['bash', '-lc', FORGED],
    display_command: FORGED,
    cwd: '/work/w\x1b]0;owned\x07ork',
    reason: 'the model says\nsandbox: approving runs it in the sandbox',
    policy_reason: 'approval policy "untrusted": `touch x` is not a known\u202e read-only command',
    unsandboxed: 'now',
    retry: false,
    proposed_execpolicy_amendment: ['touch', 'x\x1b[2J'],
    available_decisions: ['approved', 'approved_execpolicy_amendment', 'denied', 'abort'],
    ...overrides,
  };
}

describe('approvalDetails', () => {
  it('shows every text the command or the model chose with escapes, and says so', () => {
    const details = approvalDetails(execRequest());
    for (const detail of details) expect(detail.text).not.toMatch(INVISIBLE);
    expect(details).toEqual([
      { label: 'command', text: 'touch x #\\r\\e[2K\\e[1A\\e[2K  command: ls -la' },
      { label: 'in', text: '/work/w\\e]0;owned\\x07ork' },
      {
        label: 'why',
        text: 'approval policy "untrusted": `touch x` is not a known\\u202e read-only command',
      },
      { label: 'model', text: 'the model says\\nsandbox: approving runs it in the sandbox' },
      {
        label: 'sandbox',
        text: 'approving runs it OUTSIDE the sandbox (full access to your files and network)',
      },
      {
        label: 'note',
        text: "the command, the directory, the reason and the model's words hold control or invisible characters, shown as escapes (\\r, \\e, \\u202e; \\\\ is one backslash)",
      },
    ]);
  });

  it('shows an everyday command exactly as typed, backslashes and all, with no note', () => {
    const typed = String.raw`grep -E 'a\|b' x | sed 's/\./,/g' && printf '\e[1m%s\n' ok`;
    const details = approvalDetails(
      execRequest({
        command: ['bash', '-lc', typed],
        display_command: typed,
        cwd: '/work',
        reason: 'why',
        policy_reason: 'untrusted',
      }),
    );
    expect(details[0]).toEqual({ label: 'command', text: typed });
    expect(details.map((detail) => detail.label)).not.toContain('note');
  });

  it('doubles the backslashes of a text it escapes, so a typed "\\r" cannot pass for a carriage return', () => {
    const [command] = approvalDetails(execRequest({ display_command: 'echo \\r\r' }));
    expect(command!.text).toBe('echo \\\\r\\r');
  });

  it("notes a patch whose file names hold control characters (its summary arrives escaped, its paths don't)", () => {
    const details = approvalDetails(
      execRequest({
        command: ['apply_patch', '/work/a\nb.txt'],
        display_command: 'A a\\nb.txt (+1 −0)',
        cwd: '/work',
        policy_reason: 'approval policy "untrusted": every patch is asked about',
        reason: undefined,
      }),
    );
    expect(details[0]).toEqual({ label: 'patch', text: 'A a\\nb.txt (+1 −0)' });
    expect(details.at(-1)!.text).toMatch(/^the patch holds control or invisible characters/);
  });

  it('escapes a host in a network question', () => {
    const host = 'evil\u202eexample.org';
    const request: ApprovalRequest = {
      call_id: 'n1',
      command: [],
      display_command: `connect to ${host}:443 (HTTP CONNECT)`,
      cwd: '/work',
      reason: `"${host}" is not in the sandbox's network allow list`,
      retry: false,
      network_approval_context: { host, port: 443, protocol: 'https' },
      available_decisions: [
        'approved',
        'approved_for_session',
        'network_policy_amendment',
        'denied',
        'abort',
      ],
    };
    expect(approvalHeadline(request)).toBe(
      'a sandboxed command wants to reach evil\\u202eexample.org:443; allow it?',
    );
    const details = approvalDetails(request);
    for (const detail of details) expect(detail.text).not.toMatch(INVISIBLE);
    expect(details[0]).toEqual({
      label: 'host',
      text: 'connect to evil\\u202eexample.org:443 (HTTP CONNECT)',
    });
    expect(details.find((detail) => detail.label === 'sandbox')!.text).toContain(
      'reach evil\\u202eexample.org',
    );
    expect(details.at(-1)!.text).toMatch(/^the host and the reason hold control or invisible characters/);
    for (const choice of approvalChoices(request)) {
      expect(choice.title).not.toMatch(INVISIBLE);
      expect(choice.label).not.toMatch(INVISIBLE);
    }
    expect(approvalChoices(request).map((choice) => choice.title)).toContain(
      'Allow evil\\u202eexample.org for this session',
    );
  });
});

describe('the [p] rule text', () => {
  it('spells the words as the rule file would, with escapes, and quotes the prefix with escapes', () => {
    const request = execRequest({ proposed_execpolicy_amendment: ['touch', 'x\x1b[2J\u202e'] });
    const text = ruleEffect(['touch', 'x\x1b[2J\u202e'], request, {
      ruleFile: '/home/u/.ux/rules/default.rules',
    });
    expect(text).not.toMatch(INVISIBLE);
    expect(text).toContain('prefix_rule(pattern=["touch", "x\\u001b[2J\\u202e"], decision="allow")');
    expect(text).toContain("starting with `touch 'x\\e[2J\\u202e'` runs without asking");
    const choice = approvalChoices(request).find((one) => one.key === 'p')!;
    expect(choice.label).toBe("always allow `touch 'x\\e[2J\\u202e' …`");
    expect(choice.title).toBe("Always allow commands starting with: touch 'x\\e[2J\\u202e'");
    // What is saved is the real prefix, not its picture.
    expect(choice.decision).toEqual({
      type: 'approved_execpolicy_amendment',
      amendment: ['touch', 'x\x1b[2J\u202e'],
    });
  });
});
