import {
  type ApprovalRequest,
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { readableText, visibleJson } from '@ux/protocol-utils';
import { approvalChoices } from './approval-choices.js';
import { type ApprovalTextOptions, approvalDetails, approvalHeadline, ruleEffect } from './approval-text.js';
import type { Terminal } from './terminal.js';

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

/**
 * Asks the person at the terminal; offers only the answers the request allows. One key answers (no
 * Enter): the choice's letter, Ctrl-C to abort, Ctrl-D to deny.
 */
export interface TerminalReviewerOptions extends ApprovalTextOptions {
  /**
   * Runs before a question takes the screen (`ux exec`'s view shows the command's output so far
   * there, so a per-exec question follows the lines the script printed before it).
   */
  beforeQuestion?: (request: ApprovalRequest) => Promise<void> | void;
  /** Told each answer given here (`ux exec`'s view says so when an abort ended the command). */
  onAnswer?: (request: ApprovalRequest, decision: ReviewDecision) => void;
}

export function createTerminalReviewer(terminal: Terminal, options: TerminalReviewerOptions): Reviewer {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'terminal',
    review(request, { signal }) {
      // One question at a time: two prompts must never interleave on the same terminal.
      const answer = queue.then(async () => {
        if (!signal.aborted) await options.beforeQuestion?.(request);
        const screen = terminal.hold();
        try {
          const decision = await ask(screen, terminal, request, signal, options);
          options.onAnswer?.(request, decision);
          return decision;
        } finally {
          screen.release();
        }
      });
      queue = answer.catch(() => undefined);
      return answer;
    },
  };
}

async function ask(
  screen: { write(text: string): void },
  terminal: Terminal,
  request: ApprovalRequest,
  signal: AbortSignal,
  options: ApprovalTextOptions,
): Promise<ReviewDecision> {
  if (signal.aborted) return { type: 'abort' };
  const choices = approvalChoices(request);
  const details = approvalDetails(request);
  const width = Math.max(...details.map((detail) => detail.label.length));
  const rule = choices.find((choice) => choice.decision.type === 'approved_execpolicy_amendment');
  screen.write(
    [
      '',
      `ux: ${approvalHeadline(request)}`,
      ...details.map((detail) => `  ${`${detail.label}:`.padEnd(width + 1)} ${detail.text}`),
      `  ${choices.map((choice) => `[${choice.key}] ${choice.label}`).join('   ')}`,
      ...(rule?.decision.type === 'approved_execpolicy_amendment'
        ? [`  [p] ${ruleEffect(rule.decision.amendment, request, options)}`]
        : []),
      '',
    ].join('\n'),
  );
  let prompt = `Press ${choices.map((choice) => choice.key).join('/')} (Ctrl-C aborts): `;
  for (;;) {
    const key = await terminal.readKey(prompt, signal);
    if (key === null) {
      screen.write('\n');
      if (signal.aborted) return { type: 'abort' };
      throw new NoReviewerError('the terminal input ended before an answer');
    }
    if (key === CTRL_C) {
      screen.write('abort\n');
      return { type: 'abort' };
    }
    if (key === CTRL_D) {
      // A per-exec question offers approve or abort only: there, no means stop.
      if (!request.available_decisions.includes('denied')) {
        screen.write('abort\n');
        return { type: 'abort' };
      }
      screen.write('deny\n');
      return { type: 'denied' };
    }
    const choice = choices.find((c) => c.key === key.toLowerCase());
    if (choice) {
      screen.write(`${choice.key}: ${choice.label}\n`);
      return choice.decision;
    }
    prompt = `\r\x1b[K${visibleJson(key)} is not an answer; press ${choices.map((c) => c.key).join('/')}: `;
  }
}

/**
 * Used when no person can be asked (stdin is not a terminal): nothing that needs approval runs, and
 * the refusal says that no one was asked, on stderr and to the model.
 */
export function createNoTerminalReviewer(stderr: (text: string) => void): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'no-terminal',
    async review(request, { signal }) {
      if (signal.aborted) return { type: 'abort' };
      const error = new NoReviewerError(
        'stdin is not a terminal; run ux in a terminal, or choose --approval / --sandbox so that none is needed',
      );
      // The command's words and the reason as escapes, never as control characters (approvalDetails).
      stderr(
        `ux: \`${readableText(request.display_command ?? request.command.join(' '))}\` needs approval${
          request.policy_reason ? ` (${readableText(request.policy_reason)})` : ''
        }: ${error.message}\n`,
      );
      throw error;
    },
  };
}
