import { shlexJoin } from '@ux/orchestrator';
import {
  type ApprovalRequest,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { approvalChoices } from './approval-choices.js';
import type { Terminal } from './terminal.js';

/** Asks the person at the terminal; offers only the answers the request allows. */
export function createTerminalReviewer(terminal: Terminal): Reviewer {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'terminal',
    review(request, { signal }) {
      // One question at a time: two prompts must never interleave on the same terminal.
      const answer = queue.then(() => ask(terminal, request, signal));
      queue = answer.catch(() => undefined);
      return answer;
    },
  };
}

async function ask(
  terminal: Terminal,
  request: ApprovalRequest,
  signal: AbortSignal,
): Promise<ReviewDecision> {
  if (signal.aborted) return { type: 'abort' };
  const choices = approvalChoices(request);
  terminal.write(
    [
      '',
      request.retry
        ? 'ux: the sandbox stopped this command; run it again without the sandbox?'
        : 'ux: approval needed',
      `  command: ${shlexJoin(request.command)}`,
      `  cwd:     ${request.cwd}`,
      ...(request.reason ? [`  reason:  ${request.reason}`] : []),
      `  ${choices.map((choice) => `[${choice.key}] ${choice.label}`).join('  ')}`,
      '',
    ].join('\n'),
  );
  const aborted = new Promise<null>((resolve) =>
    signal.addEventListener('abort', () => resolve(null), { once: true }),
  );
  for (;;) {
    const line = await Promise.race([terminal.readLine('> '), aborted]);
    if (line === null) return signal.aborted ? { type: 'abort' } : { type: 'denied' };
    const word = line.trim().toLowerCase();
    const choice = choices.find((c) => c.key === word || c.words.includes(word));
    if (choice) return choice.decision;
    terminal.write(`  answer ${choices.map((c) => c.key).join(', ')}\n`);
  }
}

/**
 * Used when no person can be asked (stdin is not a terminal): the request is denied, never run
 * without asking, and the reason is said on stderr.
 */
export function createNoTerminalReviewer(stderr: (text: string) => void): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'no-terminal',
    async review(request) {
      stderr(
        `ux: ${request.retry ? 'retrying without the sandbox' : 'running'} \`${shlexJoin(request.command)}\` needs approval${
          request.reason ? ` (${request.reason})` : ''
        }, and there is no terminal to ask: denied. Run ux in a terminal, or choose --approval / --sandbox so that it is not needed.\n`,
      );
      return { type: 'denied' };
    },
  };
}
