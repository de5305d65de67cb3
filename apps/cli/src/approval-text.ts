import { shlexJoin } from '@ux/orchestrator';
import type { ApprovalRequest } from '@ux/protocol/core';
import { hasInvisibleText, readableText, visibleJson } from '@ux/protocol-utils';

/** Where approved prefixes are saved, for the text of the "always allow" answer. */
export interface ApprovalTextOptions {
  ruleFile: string;
}

/** The question: a rerun without the sandbox, or a first run. */
export function approvalHeadline(request: ApprovalRequest): string {
  const network = request.network_approval_context;
  if (network && !request.retry)
    return `a sandboxed command wants to reach ${readableText(network.host)}${network.port ? `:${network.port}` : ''}; allow it?`;
  // An exec the zsh fork intercepted inside an approved command: one program, asked on its own.
  if (request.approval_id !== undefined) return 'a running command wants to start this program; allow it?';
  if (request.command[0] === 'apply_patch') return 'apply this patch? (ux writes the files itself)';
  if (!request.retry) return 'approve this command?';
  return request.unsandboxed === 'now'
    ? 'the sandbox blocked this command; run it again WITHOUT the sandbox?'
    : 'the sandbox blocked this command; run it again?';
}

/**
 * What a person needs to answer an approval: the command as typed, why ux asks, what the model said,
 * and what approving does to the sandbox. The terminal prompt and MCP elicitation both show these.
 *
 * Every text that came from the command, the model or the sandbox (the command, its directory, the
 * reasons, a host) is shown through `readableText`: a control character, a bidi override or a
 * zero-width character in it is written as an escape (`\r`, `\e`, `\u202e`), so it can neither move
 * the cursor nor forge a line of the question. When that happened, a `note` line says so and where.
 */
export function approvalDetails(request: ApprovalRequest): { label: string; text: string }[] {
  const network = Boolean(request.network_approval_context) && !request.retry;
  const details = network ? networkDetails(request) : execDetails(request);
  // The command's own words count too: a patch's summary arrives escaped already, its paths do not.
  const escaped = details
    .filter(
      (detail, index) =>
        hasInvisibleText(detail.text) ||
        (index === 0 && !network && hasInvisibleText(request.command.join(' '))),
    )
    .map((detail) => detail.label);
  const shown = details.map((detail) => ({ label: detail.label, text: readableText(detail.text) }));
  shown.push({ label: 'sandbox', text: sandboxEffect(request) });
  if (escaped.length > 0) shown.push({ label: 'note', text: escapedNote(escaped) });
  return shown;
}

function execDetails(request: ApprovalRequest): { label: string; text: string }[] {
  const details = [
    {
      label:
        request.approval_id !== undefined
          ? 'program'
          : request.command[0] === 'apply_patch'
            ? 'patch'
            : 'command',
      text: request.display_command ?? shlexJoin(request.command),
    },
    // Which command is starting the program: the script a person approved or launched.
    ...(request.approval_id !== undefined && request.parent_command !== undefined
      ? [{ label: 'run by', text: request.parent_command }]
      : []),
    { label: 'in', text: request.cwd },
  ];
  const why = request.policy_reason ?? request.reason;
  if (why) details.push({ label: 'why', text: why });
  // A retry's `reason` is the gates' stock question; a first request's may be the model's own words.
  if (!request.retry && request.reason && request.reason !== why)
    details.push({ label: 'model', text: request.reason });
  return details;
}

/** A host outside the allow list: where, how, from which session, why, and what approving changes. */
function networkDetails(request: ApprovalRequest): { label: string; text: string }[] {
  const details = [
    { label: 'host', text: request.display_command ?? request.network_approval_context!.host },
  ];
  details.push({ label: 'in', text: request.cwd });
  if (request.reason) details.push({ label: 'why', text: request.reason });
  return details;
}

const ESCAPED_NAMES: Record<string, string> = {
  command: 'the command',
  program: 'the program',
  'run by': 'the command running it',
  patch: 'the patch',
  in: 'the directory',
  why: 'the reason',
  model: "the model's words",
  host: 'the host',
};

/** The line that tells the reader which texts show escapes instead of characters. */
function escapedNote(labels: readonly string[]): string {
  const names = labels.map((label) => ESCAPED_NAMES[label] ?? label);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  return `${list} ${names.length === 1 ? 'holds' : 'hold'} control or invisible characters, shown as escapes (\\r, \\e, \\u202e; \\\\ is one backslash)`;
}

/** What approving means for the sandbox, in plain words. */
export function sandboxEffect(request: ApprovalRequest): string {
  if (request.network_approval_context)
    return request.retry
      ? `approving lets it reach ${readableText(request.network_approval_context.host)}`
      : `approving lets sandboxed commands reach ${readableText(request.network_approval_context.host)} through ux's proxy (once, or for this session); nothing else of the sandbox changes`;
  if (request.command[0] === 'apply_patch')
    return request.unsandboxed === 'now'
      ? 'approving lets ux write these files outside the sandbox'
      : 'approving lets ux write these files (all inside the writable roots)';
  switch (request.unsandboxed) {
    case 'now':
      return 'approving runs it OUTSIDE the sandbox (full access to your files and network)';
    case 'after_denial':
      return 'approving runs it in the sandbox; if the sandbox stops it as it starts, it runs again OUTSIDE the sandbox without asking again';
    case 'never':
      return 'approving runs it in the sandbox';
    default:
      return 'not stated by the orchestrator';
  }
}

/** What the "always allow" answer writes and what it lets through from then on. */
export function ruleEffect(
  prefix: readonly string[],
  request: ApprovalRequest,
  options: ApprovalTextOptions,
): string {
  // The words as the rule file spells them, with invisible characters as JSON escapes.
  const words = prefix.map((word) => visibleJson(word)).join(', ');
  const where = request.amendment_unsandboxed === false ? 'in the sandbox' : 'OUTSIDE the sandbox';
  return `saves prefix_rule(pattern=[${words}], decision="allow") to ${readableText(options.ruleFile)}; from then on every command starting with \`${readableText(shlexJoin(prefix))}\` runs without asking, ${where} (delete the line to undo)`;
}
