import { shlexJoin } from '@ux/orchestrator';
import type { ApprovalRequest, ReviewDecision, ReviewDecisionType } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';

/** One answer a person may give, as each front end names it. */
export interface ApprovalChoice {
  /** The terminal's key and the other words it accepts. */
  key: string;
  words: string[];
  /** The value of the MCP elicitation's `decision` field. */
  value: string;
  /** For the terminal. */
  label: string;
  /** For an MCP client. */
  title: string;
  decision: ReviewDecision;
}

const BASIC: (Omit<ApprovalChoice, 'decision'> & { type: ReviewDecisionType })[] = [
  {
    key: 'y',
    words: ['yes', 'approve'],
    value: 'approve',
    label: 'approve once',
    title: 'Approve once',
    type: 'approved',
  },
  {
    key: 'a',
    words: ['session'],
    value: 'approve_for_session',
    label: 'approve for this session',
    title: 'Approve for this session',
    type: 'approved_for_session',
  },
  { key: 'n', words: ['no', 'deny'], value: 'deny', label: 'deny', title: 'Deny', type: 'denied' },
  {
    key: 'x',
    words: ['abort'],
    value: 'abort',
    label: 'abort (stop waiting for this command)',
    title: 'Abort (stop waiting for this command)',
    type: 'abort',
  },
];

const PER_EXEC_ABORT = {
  label: 'abort (refuse it and end the command)',
  title: 'Abort (refuse it and end the command)',
};

/**
 * The answers a request allows, in the order they are offered: approve once, for the session, always
 * for the proposed prefix (when there is one), deny, abort. The terminal and MCP reviewers both ask
 * from this list.
 */
export function approvalChoices(request: ApprovalRequest): ApprovalChoice[] {
  if (request.network_approval_context) return networkChoices(request, request.network_approval_context.host);
  const perExec = request.approval_id !== undefined;
  const choices: ApprovalChoice[] = BASIC.filter((choice) =>
    request.available_decisions.includes(choice.type),
  ).map(({ type, ...rest }) => ({
    ...rest,
    // At a program a running command starts, abort refuses it and ends that command.
    ...(type === 'abort' && perExec ? PER_EXEC_ABORT : {}),
    decision: { type } as ReviewDecision,
  }));
  const prefix = request.proposed_execpolicy_amendment;
  if (prefix && request.available_decisions.includes('approved_execpolicy_amendment')) {
    const at = choices.findIndex(
      (choice) => choice.decision.type === 'denied' || choice.decision.type === 'abort',
    );
    // The words as a person reads them: an escape, never a control character (see approvalDetails).
    const shown = readableText(shlexJoin(prefix));
    choices.splice(at < 0 ? choices.length : at, 0, {
      key: 'p',
      words: ['prefix', 'always'],
      value: 'approve_prefix',
      label: `always allow \`${shown} …\``,
      title: `Always allow commands starting with: ${shown}`,
      decision: { type: 'approved_execpolicy_amendment', amendment: [...prefix] },
    });
  }
  return choices;
}

/**
 * A host outside the network allow list: allow this connection, allow the host for the session, deny
 * it for the session, deny this connection, or abort (which also stops asking about the host).
 */
function networkChoices(request: ApprovalRequest, host: string): ApprovalChoice[] {
  const shown = readableText(host);
  const all: (Omit<ApprovalChoice, 'label'> & { type: ReviewDecisionType })[] = [
    {
      key: 'y',
      words: ['yes', 'allow'],
      value: 'approve',
      title: 'Allow this connection',
      type: 'approved',
      decision: { type: 'approved' },
    },
    {
      key: 'a',
      words: ['session'],
      value: 'approve_for_session',
      title: `Allow ${shown} for this session`,
      type: 'approved_for_session',
      decision: { type: 'approved_for_session' },
    },
    {
      key: 'd',
      words: ['never'],
      value: 'deny_for_session',
      title: `Deny ${shown} for this session`,
      type: 'network_policy_amendment',
      decision: { type: 'network_policy_amendment', amendment: { host, action: 'deny' } },
    },
    {
      key: 'n',
      words: ['no', 'deny'],
      value: 'deny',
      title: 'Deny this connection',
      type: 'denied',
      decision: { type: 'denied' },
    },
    {
      key: 'x',
      words: ['abort'],
      value: 'abort',
      title: 'Abort (deny, and ask no more about this host)',
      type: 'abort',
      decision: { type: 'abort' },
    },
  ];
  // The terminal's label is the title in lower case: "allow example.org for this session".
  return all
    .filter((choice) => request.available_decisions.includes(choice.type))
    .map(({ type, ...choice }) => ({
      ...choice,
      label: choice.title[0]!.toLowerCase() + choice.title.slice(1),
    }));
}
