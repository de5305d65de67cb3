import { shlexJoin } from '@ux/orchestrator';
import type { ApprovalRequest } from '@ux/protocol/core';

/** Where approved prefixes are saved, for the text of the "always allow" answer. */
export interface ApprovalTextOptions {
  ruleFile: string;
}

/** The question: a rerun without the sandbox, or a first run. */
export function approvalHeadline(request: ApprovalRequest): string {
  const network = request.network_approval_context;
  if (network && !request.retry)
    return `a sandboxed command wants to reach ${network.host}${network.port ? `:${network.port}` : ''}; allow it?`;
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
 */
export function approvalDetails(request: ApprovalRequest): { label: string; text: string }[] {
  if (request.network_approval_context && !request.retry) return networkDetails(request);
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
    { label: 'in', text: request.cwd },
  ];
  const why = request.policy_reason ?? request.reason;
  if (why) details.push({ label: 'why', text: why });
  // A retry's `reason` is the gates' stock question; a first request's may be the model's own words.
  if (!request.retry && request.reason && request.reason !== why)
    details.push({ label: 'model', text: request.reason });
  details.push({ label: 'sandbox', text: sandboxEffect(request) });
  return details;
}

/** A host outside the allow list: where, how, from which session, why, and what approving changes. */
function networkDetails(request: ApprovalRequest): { label: string; text: string }[] {
  const details = [
    { label: 'host', text: request.display_command ?? request.network_approval_context!.host },
  ];
  details.push({ label: 'in', text: request.cwd });
  if (request.reason) details.push({ label: 'why', text: request.reason });
  details.push({ label: 'sandbox', text: sandboxEffect(request) });
  return details;
}

/** What approving means for the sandbox, in plain words. */
export function sandboxEffect(request: ApprovalRequest): string {
  if (request.network_approval_context)
    return request.retry
      ? `approving lets it reach ${request.network_approval_context.host}`
      : `approving lets sandboxed commands reach ${request.network_approval_context.host} through ux's proxy (once, or for this session); nothing else of the sandbox changes`;
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
  const words = prefix.map((word) => JSON.stringify(word)).join(', ');
  const where = request.amendment_unsandboxed === false ? 'in the sandbox' : 'OUTSIDE the sandbox';
  return `saves prefix_rule(pattern=[${words}], decision="allow") to ${options.ruleFile}; from then on every command starting with \`${shlexJoin(prefix)}\` runs without asking, ${where} (delete the line to undo)`;
}
