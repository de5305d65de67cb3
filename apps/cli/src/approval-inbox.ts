import { type ApprovalRequest, markError, type ReviewDecision, UxError } from '@ux/protocol/core';
import { approvalChoices } from './approval-choices.js';
import { type ApprovalTextOptions, approvalDetails, approvalHeadline, ruleEffect } from './approval-text.js';

/** What a pending question is about, as `ux approvals` names it. */
export type ApprovalKind =
  | 'exec_approval'
  | 'escalation'
  | 'retry_without_sandbox'
  | 'network_host'
  | 'per_exec';

/** One answer a pending question offers, as the wire and `ux approvals` show it. */
export interface PendingChoice {
  /** The terminal prompt's key (`y`, `a`, `p`, `n`, `x`, `d`). */
  key: string;
  /** What `approvals.answer` takes (`approve`, `approve_for_session`, `deny`, `abort`, …). */
  value: string;
  label: string;
}

/** A question waiting in the inbox: the terminal prompt's headline, details and choices. */
export interface PendingApproval {
  /** `PID:N`: unique across the user's ux processes. */
  id: string;
  kind: ApprovalKind;
  headline: string;
  details: { label: string; text: string }[];
  choices: PendingChoice[];
  /** What the "always allow" answer saves, when one is offered. */
  rule?: string;
  /** The tool call that asked. */
  callId: string;
  /** Milliseconds since the epoch. */
  askedAt: number;
  /** When the question gives up (`approval_timeout_s`); absent: it waits. */
  expiresAt?: number;
}

/** Why a question left the inbox. */
export type RemovedReason = 'answered' | 'timed_out' | 'cancelled';

export type InboxEvent =
  | { type: 'added'; approval: PendingApproval }
  | { type: 'removed'; id: string; reason: RemovedReason; decision?: ReviewDecision['type'] };

const APPROVAL_ANSWER_REFUSED = 'ux.cli.InboxAnswerError';

/** An answer the inbox cannot take: no such question, or a decision it does not offer. */
export class InboxAnswerError extends UxError {
  constructor(
    readonly reason: 'not_found' | 'not_offered',
    message: string,
  ) {
    super('approval_answer_refused', message);
    this.name = 'InboxAnswerError';
    markError(this, APPROVAL_ANSWER_REFUSED);
  }
  static override isInstance(error: unknown): error is InboxAnswerError {
    return UxError.hasMarker(error, APPROVAL_ANSWER_REFUSED);
  }
  override toJSON() {
    return { ...super.toJSON(), reason: this.reason };
  }
}

/** What the inbox returns when `timeoutMs` passed without an answer. */
export const TIMED_OUT = Symbol('timed out');

/** The words `approvals.answer` and `ux approvals answer` accept for a choice's value. */
const ALIASES: Record<string, string> = {
  'approve-session': 'approve_for_session',
  'approve-for-session': 'approve_for_session',
  'approve-prefix': 'approve_prefix',
  'deny-session': 'deny_for_session',
  'deny-for-session': 'deny_for_session',
};

/** A choice's value as `ux approvals answer` spells it: `approve-session`, `deny-session`, `approve-prefix`. */
export function decisionWord(value: string): string {
  return value.replace('_for_', '_').replaceAll('_', '-');
}

/** The kind of a request, for the list and for scripts. */
export function approvalKind(request: ApprovalRequest): ApprovalKind {
  if (request.network_approval_context && !request.retry) return 'network_host';
  if (request.approval_id !== undefined) return 'per_exec';
  if (request.retry) return 'retry_without_sandbox';
  if (request.unsandboxed === 'now' || request.additional_permissions !== undefined) return 'escalation';
  return 'exec_approval';
}

/**
 * This process's pending approval questions, for a person to answer from another terminal
 * (`ux approvals`, through the control socket). `ask` adds one and waits for its answer, the call's
 * abort, or the timeout; the question leaves the inbox in every case. Listeners hear every addition and
 * removal (the control server publishes them; the desktop notification is sent from one).
 */
export class ApprovalInbox {
  private next = 1;
  private readonly pending = new Map<
    string,
    { approval: PendingApproval; request: ApprovalRequest; settle: (decision: ReviewDecision) => void }
  >();
  private readonly listeners = new Set<(event: InboxEvent) => void>();

  constructor(private readonly options: ApprovalTextOptions & { pid?: number; now?: () => number }) {}

  /** Adds `request` and waits: its answer, `abort` when `signal` aborts, `TIMED_OUT` after `timeoutMs`. */
  ask(
    request: ApprovalRequest,
    { signal, timeoutMs }: { signal: AbortSignal; timeoutMs?: number },
  ): Promise<ReviewDecision | typeof TIMED_OUT> {
    if (signal.aborted) return Promise.resolve({ type: 'abort' });
    const now = this.options.now?.() ?? Date.now();
    const id = `${this.options.pid ?? process.pid}:${this.next++}`;
    const choices = approvalChoices(request);
    const rule = choices.find((choice) => choice.decision.type === 'approved_execpolicy_amendment');
    const approval: PendingApproval = {
      id,
      kind: approvalKind(request),
      headline: approvalHeadline(request),
      details: approvalDetails(request),
      choices: choices.map(({ key, value, label }) => ({ key, value, label })),
      ...(rule?.decision.type === 'approved_execpolicy_amendment'
        ? { rule: ruleEffect(rule.decision.amendment, request, this.options) }
        : {}),
      callId: request.call_id,
      askedAt: now,
      ...(timeoutMs === undefined ? {} : { expiresAt: now + timeoutMs }),
    };
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      // A waiting question keeps the process alive: the control socket does not (ux exec has nothing
      // else to wait on while its command waits for an answer).
      const alive = setInterval(() => undefined, 2 ** 31 - 1);
      const finish = (
        result: ReviewDecision | typeof TIMED_OUT,
        reason: RemovedReason,
        decision?: ReviewDecision['type'],
      ) => {
        if (!this.pending.delete(id)) return;
        if (timer) clearTimeout(timer);
        clearInterval(alive);
        signal.removeEventListener('abort', onAbort);
        this.emit({ type: 'removed', id, reason, ...(decision ? { decision } : {}) });
        resolve(result);
      };
      const onAbort = () => finish({ type: 'abort' }, 'cancelled');
      this.pending.set(id, {
        approval,
        request,
        settle: (decision) => finish(decision, 'answered', decision.type),
      });
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(() => finish(TIMED_OUT, 'timed_out'), timeoutMs);
      this.emit({ type: 'added', approval });
    });
  }

  /** The pending questions, oldest first. */
  list(): PendingApproval[] {
    return [...this.pending.values()].map((entry) => entry.approval);
  }

  /**
   * Answers question `id` with one of its choices (`value`, the key, or a dashed alias such as
   * `approve-session`). Throws `InboxAnswerError` naming the questions or the choices there are.
   */
  answer(id: string, decision: string): { id: string; decision: ReviewDecision['type']; label: string } {
    const entry = this.pending.get(id);
    if (!entry) {
      const ids = [...this.pending.keys()];
      throw new InboxAnswerError(
        'not_found',
        `no pending question ${JSON.stringify(id)} here${ids.length > 0 ? `; pending: ${ids.join(', ')}` : ' (none is pending; it may have been answered, timed out or cancelled)'}`,
      );
    }
    const word = ALIASES[decision] ?? decision;
    const choices = approvalChoices(entry.request);
    const chosen = choices.find((choice) => choice.value === word || choice.key === word);
    if (!chosen)
      throw new InboxAnswerError(
        'not_offered',
        `question ${id} does not offer ${JSON.stringify(decision)}; it offers ${choices.map((choice) => decisionWord(choice.value)).join(', ')}`,
      );
    entry.settle(chosen.decision);
    return { id, decision: chosen.decision.type, label: chosen.label };
  }

  /** Hears every question added and removed; returns the unsubscribe. */
  onChange(listener: (event: InboxEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: InboxEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure must never keep a question from being asked or answered.
      }
    }
  }
}
