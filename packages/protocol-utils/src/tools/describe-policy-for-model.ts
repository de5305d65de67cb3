import type { ApprovalPolicy, EffectivePolicy, FileSystemEntry } from '@ux/protocol/core';
import { approvalPolicyName } from '@ux/protocol/core';
import { readableText } from '../text/readable-text.js';

/** Who answers when a command or a host needs approval in this session. */
export type PolicyAsker =
  /** The person, through the terminal or the MCP client's questions (elicitation). */
  | { kind: 'person' }
  /** A configured automatic reviewer answers instead of the person. */
  | { kind: 'automatic_reviewer' }
  /** Nobody can be asked; `why` in a few words ("this MCP client cannot show approval questions"). */
  | { kind: 'nobody'; why: string };

/** One environment a call may run in (`environment_id`). */
export interface EnvironmentForModel {
  id: string;
  /** Absent: this machine. Otherwise a few words saying it is remote (`a ux exec-server`). */
  remote?: string;
  /** Where its commands start, when not the session directory. */
  cwd?: string;
}

/** The session's effective policy and the facts around it that a model must know to act on it. */
export interface PolicyForModel {
  /** The session's effective policy (with `privateTmp` and the protections the session adds). */
  policy: EffectivePolicy;
  /** The session directory: what the policy's `cwd` and `project_roots` entries mean. Absolute. */
  workspace: string;
  /** The tool that runs commands: only exec_command can ask to leave the sandbox. */
  tool: 'exec_command' | 'shell_command';
  /** exec_command offers `with_additional_permissions` (feature `exec_permission_approvals`). */
  additionalPermissions?: boolean;
  approvalPolicy: ApprovalPolicy;
  asker: PolicyAsker;
  /** With `policy.network === 'proxied'`: the proxy's lists and what happens to other hosts. */
  domains?: {
    allow: readonly string[];
    deny: readonly string[];
    /**
     * Hosts in neither list: asked about (the `asker` answers; with `within`, only hosts the
     * administrator's cap lists, others refused), or refused, with a few words why.
     */
    others: 'ask' | { ask: 'within'; within: readonly string[] } | { refused: string };
    /** Hosts answered "for the session" since the session started (they change during it). */
    allowedThisSession?: readonly string[];
    refusedThisSession?: readonly string[];
  };
  /**
   * Command prefixes approved during the session (a `prefix_rule` answered "always"): later commands
   * that start with one run without a question.
   */
  approvedPrefixes?: readonly (readonly string[])[];
  /** The environments calls may choose; mentioned when there is more than one or the default is remote. */
  environments?: { list: readonly EnvironmentForModel[]; defaultId: string };
  /** Where the private temporary directory is: `/tmp` on Linux, `$TMPDIR` elsewhere. Default linux. */
  platform?: NodeJS.Platform;
}

/** Longer lists are cut to this many names and "and N more"… */
const LIST_LIMIT = 6;
/** …or to this many, when the text would otherwise pass `SOFT_MAX_CHARACTERS`. */
const SHORT_LIST_LIMIT = 2;
/** Claude Code cuts a server's instructions at 2,048 characters: stay well below it. */
const SOFT_MAX_CHARACTERS = 1900;
/** The list limit of the text being rendered (`describePolicyForModel` is synchronous). */
let listLimit = LIST_LIMIT;

/**
 * The session's sandbox in the words a model reads on every turn (tool descriptions, MCP server
 * instructions): what is writable, what is unreadable, the protected names, the network and listening
 * ports, the environments, and how to ask for more with who will be asked. One function of the policy
 * and the session's facts, so every place says the same; short by design (docs/mcp-policy-text.md has
 * the budget).
 */
export function describePolicyForModel(input: PolicyForModel): string {
  try {
    listLimit = LIST_LIMIT;
    const text = render(input);
    if (text.length <= SOFT_MAX_CHARACTERS) return text;
    listLimit = SHORT_LIST_LIMIT;
    return render(input);
  } finally {
    listLimit = LIST_LIMIT;
  }
}

function render(input: PolicyForModel): string {
  const { policy } = input;
  const lines: string[] = [];
  const fileSystem = policy.fileSystem;
  if (fileSystem.kind === 'unrestricted') {
    lines.push(
      'No sandbox (sandbox mode danger-full-access): commands run with the user’s own rights, every file and the network included.',
    );
  } else if (fileSystem.kind === 'external-sandbox') {
    lines.push(
      'Sandbox: enforced outside ux (an external sandbox); ux does not know its limits. Network: ' +
        (policy.network === 'restricted' ? 'assume off.' : 'assume on.'),
    );
  } else {
    lines.push(writableLine(input, fileSystem.entries));
    const unreadable = unreadableLine(fileSystem.entries);
    if (unreadable) lines.push(unreadable);
    lines.push(networkLine(input));
    const sockets = policy.allowUnixSockets ?? [];
    if (sockets.length > 0)
      lines.push(`Unix sockets commands may connect to: ${listed(sockets.map(readableText))}.`);
  }
  const environments = environmentsLine(input);
  if (environments) lines.push(environments);
  lines.push(approvalsLine(input));
  const prefixes = input.approvedPrefixes ?? [];
  if (prefixes.length > 0)
    lines.push(
      `Approved in this session, so run without a question: commands starting with ${listed(
        prefixes.map((prefix) => `\`${prefix.map(readableText).join(' ')}\``),
      )}.`,
    );
  return ['Sandbox rules for commands (ux):', ...lines.map((line) => `- ${line}`)].join('\n');
}

function writableLine(input: PolicyForModel, entries: readonly FileSystemEntry[]): string {
  const places: string[] = [];
  let tmp = false;
  for (const entry of entries) {
    if (entry.access !== 'write') continue;
    const { path } = entry;
    if (path.type === 'special') {
      if (path.value === 'cwd' || path.value === 'project_roots') {
        const workspace = `the workspace ${readableText(input.workspace)}`;
        if (!places.includes(workspace)) places.push(workspace);
      } else if (path.value === 'slash_tmp' || path.value === 'tmpdir') tmp = true;
      else if (path.value === 'root') places.push('every file');
    } else if (path.type === 'path') places.push(readableText(path.path));
    else places.push(readableText(path.pattern));
  }
  if (tmp) places.push(tmpWords(input));
  const protectedNames =
    'so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home';
  if (places.length === 0)
    return 'Writable: nothing (sandbox mode read-only), not even /tmp: any write fails with "Read-only file system". Reading is allowed.';
  return `Writable: ${joined(places)}. Everything else is read-only, and ${protectedNames}.`;
}

function tmpWords(input: PolicyForModel): string {
  const where = (input.platform ?? 'linux') === 'linux' ? '/tmp' : '$TMPDIR';
  if (input.policy.privateTmp)
    return `${where} (this session’s own: not the host’s ${where}, removed when the session ends)`;
  return '/tmp and $TMPDIR (the host’s, shared)';
}

function unreadableLine(entries: readonly FileSystemEntry[]): string | undefined {
  const hidden = entries.flatMap((entry) => {
    if (entry.access !== 'none') return [];
    if (entry.path.type === 'path') return [readableText(entry.path.path)];
    if (entry.path.type === 'glob') return [readableText(entry.path.pattern)];
    return [];
  });
  if (hidden.length === 0) return undefined;
  return `Unreadable: ${listed(hidden)} (reads fail, also for approved commands).`;
}

function networkLine(input: PolicyForModel): string {
  const { policy } = input;
  switch (policy.network) {
    case 'restricted':
      return 'Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.';
    case 'enabled':
      return 'Network: on (the host’s network); listening on ports works.';
    case 'proxied': {
      const domains = input.domains ?? { allow: [], deny: [], others: { refused: 'not in the list' } };
      const parts = [
        `Network: only these hosts, through ux’s proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are set; no DNS or UDP of your own): ${
          domains.allow.length > 0 ? listed(domains.allow.map(readableText)) : 'none listed'
        }.`,
      ];
      if (domains.allowedThisSession?.length)
        parts.push(`Also allowed for this session: ${listed(domains.allowedThisSession.map(readableText))}.`);
      if (domains.deny.length > 0) parts.push(`Never: ${listed(domains.deny.map(readableText))}.`);
      if (domains.refusedThisSession?.length)
        parts.push(`Refused for this session: ${listed(domains.refusedThisSession.map(readableText))}.`);
      parts.push(othersWords(domains.others, input));
      parts.push('A port you listen on is reachable only within the same command.');
      if (input.environments?.list.some((environment) => environment.remote))
        parts.push('Remote environments cannot use this proxy: commands sent there are refused.');
      return parts.join(' ');
    }
  }
}

/** What happens to a host in neither list. */
function othersWords(
  others: NonNullable<PolicyForModel['domains']>['others'],
  input: PolicyForModel,
): string {
  if (typeof others === 'object' && 'refused' in others)
    return `Other hosts are refused (${others.refused}).`;
  const who = askerWords(input);
  if (!who) return `Other hosts are refused (${nobodyWhy(input)}).`;
  const asked = `is put to ${who} when a command connects (once, for the session, or no)`;
  if (others === 'ask') return `Another host ${asked}.`;
  return `Another host within ${listed(others.within.map(readableText))} ${asked}; others are refused.`;
}

function environmentsLine(input: PolicyForModel): string | undefined {
  const environments = input.environments;
  if (!environments) return undefined;
  const { list, defaultId } = environments;
  const remoteDefault = list.find((environment) => environment.id === defaultId)?.remote !== undefined;
  if (list.length < 2 && !remoteDefault) return undefined;
  const described = list.map((environment) => {
    const words = [
      environment.remote ? `remote: ${readableText(environment.remote)}` : 'this machine',
      ...(environment.cwd ? [`starts in ${readableText(environment.cwd)}`] : []),
      ...(environment.id === defaultId ? ['the default'] : []),
    ];
    return `${readableText(environment.id)} (${words.join(', ')})`;
  });
  const choose = list.length > 1 ? 'Environments (environment_id)' : 'Environment';
  const remote = list.some((environment) => environment.remote)
    ? ' A remote one applies the same rules to its own files, its own /tmp and its own network.'
    : '';
  return `${choose}: ${listed(described)}.${remote}`;
}

function approvalsLine(input: PolicyForModel): string {
  const name = approvalPolicyName(input.approvalPolicy);
  const sandboxed = input.policy.fileSystem.kind === 'restricted';
  if (name === 'never')
    return sandboxed
      ? 'Approvals: nobody is asked (approval policy never): whatever needs approval is refused, require_escalated and force-deleting commands (rm -rf …) included. Work within these limits.'
      : 'Approvals: nobody is asked (approval policy never); commands run as they are.';
  const who = askerWords(input);
  if (!who)
    return `Approvals: nobody can be asked (${nobodyWhy(input)}): whatever needs approval is refused${
      sandboxed ? ', require_escalated included,' : ''
    } and so are force-deleting commands (rm -rf …). Work within these limits.`;
  const parts: string[] = [];
  if (name === 'untrusted')
    parts.push(`every command but known read-only ones (ls, cat, git status, …) is put to ${who} first.`);
  else parts.push(`force-deleting commands (rm -rf …) are put to ${who} first.`);
  const denyRead =
    input.policy.fileSystem.kind === 'restricted' &&
    input.policy.fileSystem.entries.some((entry) => entry.access === 'none');
  if (!sandboxed) return `Approvals: ${parts.join(' ')}`;
  if (denyRead) {
    parts.push(
      'Nothing runs outside the sandbox in this session, even when approved: unreadable paths are set.',
    );
  } else if (name === 'on-request' && input.tool === 'exec_command') {
    parts.push(
      `If the sandbox blocks what the task needs, run the command again with sandbox_permissions "require_escalated" and a justification (one sentence for ${who}): ${who} may let it run outside the sandbox once, for the session, or, given prefix_rule (e.g. ["npm", "install"]), for all later commands with that prefix.`,
    );
    if (input.additionalPermissions)
      parts.push(
        'To widen the sandbox for one command instead, use "with_additional_permissions" with additional_permissions.',
      );
  } else if (wantsRetryQuestion(input.approvalPolicy)) {
    parts.push(`A command the sandbox blocks as it starts is offered to ${who} to run again outside it.`);
  }
  if (input.tool === 'shell_command') parts.push('shell_command cannot ask to run outside the sandbox.');
  else if (name !== 'on-request') parts.push(`require_escalated is refused under approval policy ${name}.`);
  return `Approvals: ${parts.join(' ')}`;
}

function wantsRetryQuestion(policy: ApprovalPolicy): boolean {
  if (typeof policy === 'object') return policy.granular.sandbox_approval;
  return policy === 'untrusted' || policy === 'on-failure';
}

function askerWords(input: PolicyForModel): string | undefined {
  switch (input.asker.kind) {
    case 'person':
      return 'the person';
    case 'automatic_reviewer':
      return 'an automatic reviewer';
    case 'nobody':
      return undefined;
  }
}

function nobodyWhy(input: PolicyForModel): string {
  if (input.asker.kind === 'nobody') return input.asker.why;
  return `approval policy ${approvalPolicyName(input.approvalPolicy)}`;
}

/** Names already made readable, cut to the list limit. */
function listed(names: readonly string[]): string {
  if (names.length <= listLimit) return names.join(', ');
  return `${names.slice(0, listLimit).join(', ')} and ${names.length - listLimit} more`;
}

function joined(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  const shown =
    items.length > listLimit + 1 ? [...items.slice(0, listLimit), `${items.length - listLimit} more`] : items;
  return `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

/**
 * A tool definition as a model should see it in a session: the policy text (`describePolicyForModel`)
 * after the description of a tool that runs commands (`exec_command`, `shell_command`); any other tool
 * (`write_stdin` types into a process that is already running) unchanged. For hosts that hand a door's
 * `tools` to a model; `ux mcp` lists its tools through it.
 */
export function withPolicyText<Tool extends { name: string; description: string }>(
  tool: Tool,
  policyText: string,
): Tool {
  if (tool.name !== 'exec_command' && tool.name !== 'shell_command') return tool;
  return { ...tool, description: `${tool.description}\n\n${policyText}` };
}
