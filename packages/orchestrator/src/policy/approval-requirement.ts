import {
  type ApprovalPolicy,
  approvalPolicyName,
  type FileSystemPolicy,
  type SandboxPermissions,
} from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { isDangerousCommand } from '../safety/is-dangerous-command.js';
import { isKnownSafeCommand } from '../safety/is-known-safe-command.js';
import type { BashParser } from '../shell/bash-parser.js';
import { executableName, shellInvocation } from '../shell/shell-invocation.js';
import { shlexJoin } from '../shell/shlex-join.js';
import type { ExecPolicy } from './exec-policy.js';
import { type Decision, type RuleMatch, stricterDecision } from './prefix-rule.js';

/** Whether and how a command may run before anyone is asked. */
export type ApprovalRequirement =
  | {
      type: 'skip';
      /** Every sub-command matched an explicit `allow` rule: run it without a sandbox. */
      bypassSandbox: boolean;
      /** A rule the user may save when asked to retry without the sandbox. */
      proposedAmendment?: string[];
    }
  | {
      type: 'needs_approval';
      /** A prompt rule's reason (Codex's): what reviewers see as `reason` before the model's justification. */
      reason?: string;
      /** Why ux asks, always: the rule, the dangerous command, the approval policy, the escalation. */
      policyReason: string;
      proposedAmendment?: string[];
    }
  | {
      type: 'forbidden';
      reason: string /** A prefix rule forbade it (not a heuristic or the approval policy). */;
      byRule?: boolean;
    };

export interface ApprovalRequirementInput {
  /** The argv before sandboxing, e.g. `['/bin/bash', '-lc', 'git status']`. */
  argv: readonly string[];
  approvalPolicy: ApprovalPolicy;
  fileSystemKind: FileSystemPolicy['kind'];
  /** As the fallback sees it: `use_default` when the permissions were granted earlier. */
  sandboxPermissions: SandboxPermissions;
  /** The model's suggested prefix for an `approved_execpolicy_amendment`. */
  prefixRule?: readonly string[];
  execPolicy: ExecPolicy;
  bash: BashParser;
  platform: NodeJS.Platform;
}

export const NEVER_PROMPT_REASON = 'approval required by policy, but AskForApproval is set to Never';
export const GRANULAR_RULES_REASON =
  'approval required by policy rule, but AskForApproval::Granular.rules is false';
export const GRANULAR_SANDBOX_REASON =
  'approval required by policy, but AskForApproval::Granular.sandbox_approval is false';

// Programs whose bare prefix (or prefix plus one option such as `-c`) would allow running anything.
const OPEN_ENDED_PROGRAMS = new Set([
  'bash',
  'sh',
  'zsh',
  'dash',
  'fish',
  'pwsh',
  'powershell',
  'powershell.exe',
  'cmd',
  'cmd.exe',
  'python',
  'python2',
  'python3',
  'py',
  'pyw',
  'pythonw',
  'pypy',
  'pypy3',
  'node',
  'nodejs',
  'deno',
  'bun',
  'perl',
  'ruby',
  'php',
  'lua',
  'osascript',
  'env',
  'sudo',
  'doas',
  'xargs',
  'git',
]);

type Entry =
  | { kind: 'rule'; rendered: string; match: RuleMatch }
  | {
      kind: 'heuristic';
      rendered: string;
      command: readonly string[];
      decision: Decision;
      /** Why the heuristics ask, for a `prompt`. */
      why?: string;
    };

/**
 * The approval requirement of one command (Codex's exec policy; docs/reference/orchestrator.md §3): the
 * argv is split into sub-commands (a plain `bash -lc` script into its commands); each is matched against
 * the prefix rules or, when none matches, judged by the fallback heuristics; the most restrictive
 * decision wins.
 * A script that is not plain is judged as a whole, and in addition every `prompt` / `forbidden` rule
 * applies to each literal command found anywhere inside it, so wrapping a forbidden command in a
 * subshell or a substitution does not hide it.
 */
export function approvalRequirement(input: ApprovalRequirementInput): ApprovalRequirement {
  const { execPolicy } = input;
  const { commands, complex, nested } = commandsForPolicy(input.argv, input.bash);
  const fallback = (command: readonly string[]) => fallbackDecision(command, complex, input);

  const entries: Entry[] = [];
  for (const command of commands) {
    const matches = execPolicy.matches(command);
    const rendered = shlexJoin(command);
    if (matches.length > 0)
      entries.push(...matches.map((match): Entry => ({ kind: 'rule', rendered, match })));
    else {
      const decision = fallback(command);
      entries.push({
        kind: 'heuristic',
        rendered,
        command,
        decision,
        ...(decision === 'prompt' ? { why: heuristicReason(command, rendered, complex, input) } : {}),
      });
    }
  }
  for (const command of nested) {
    for (const match of execPolicy.matches(command.words)) {
      if (match.rule.decision !== 'allow')
        entries.push({ kind: 'rule', rendered: command.display.join(' '), match });
    }
  }
  const decision = entries.map(entryDecision).reduce(stricterDecision, 'allow');
  const anyRuleMatched = entries.some((entry) => entry.kind === 'rule');

  if (decision === 'forbidden')
    return {
      type: 'forbidden',
      reason: forbiddenReason(entries),
      ...(mostSpecific(entries, 'forbidden') ? { byRule: true } : {}),
    };

  if (decision === 'prompt') {
    const ruleDriven = entries.some(
      (entry) => entry.kind === 'rule' && entry.match.rule.decision === 'prompt',
    );
    const refusal = promptRefusal(input.approvalPolicy, ruleDriven);
    if (refusal) return { type: 'forbidden', reason: refusal };
    const requested = complex || anyRuleMatched ? undefined : requestedAmendment(input, commands, fallback);
    const derived = complex || ruleDriven ? undefined : specific(firstHeuristic(entries, 'prompt'));
    const proposedAmendment = requested ?? derived;
    const reason = promptReason(entries);
    const why = entries.find((entry) => entry.kind === 'heuristic' && entry.why !== undefined);
    const policyReason =
      reason ?? (why?.kind === 'heuristic' ? why.why : undefined) ?? 'the approval policy asks for it';
    return {
      type: 'needs_approval',
      ...(reason === undefined ? {} : { reason }),
      policyReason,
      ...(proposedAmendment === undefined ? {} : { proposedAmendment }),
    };
  }

  const bypassSandbox = commands.every((command) =>
    execPolicy.matches(command).some((match) => match.rule.decision === 'allow'),
  );
  // Offered when asking to rerun without the sandbox: the model's prefix first, as for a prompt.
  const proposedAmendment =
    complex || anyRuleMatched
      ? undefined
      : (requestedAmendment(input, commands, fallback) ??
        // A rule for one command of several would not let the script out of the sandbox.
        (commands.length === 1 ? specific(firstHeuristic(entries, 'allow')) : undefined));
  return { type: 'skip', bypassSandbox, ...(proposedAmendment === undefined ? {} : { proposedAmendment }) };
}

/** The requirement of one program the zsh fork intercepted: no shell parsing, the program resolved. */
export type ExecRequirement =
  | { decision: 'allow'; ruleDriven: boolean }
  | { decision: 'prompt'; ruleDriven: boolean; policyReason: string }
  | { decision: 'forbidden'; reason: string };

/**
 * Judges one exec the zsh fork intercepted (docs/reference/zsh-fork.md §4): `command` is the resolved
 * absolute program followed by `argv[1..]`. Rules match it with Codex's `resolve_host_executables`
 * (a rule for `git` covers `/usr/bin/git` unless `host_executable` lists other paths); an unmatched
 * command goes to the same heuristics as a whole command. A shell's `-c` payload is not parsed: only
 * the execs it makes tell what really runs. `ruleDriven`: a rule produced the final decision.
 */
export function execRequirement(
  input: Omit<ApprovalRequirementInput, 'argv' | 'prefixRule'> & { command: readonly string[] },
): ExecRequirement {
  const { command } = input;
  const full: ApprovalRequirementInput = { ...input, argv: command };
  const rendered = shlexJoin(command);
  const matches = input.execPolicy.matches(command, { resolvedProgram: true });
  const entries: Entry[] = matches.map((match) => ({ kind: 'rule', rendered, match }));
  if (entries.length === 0) {
    const decision = fallbackDecision(command, false, full);
    entries.push({
      kind: 'heuristic',
      rendered,
      command,
      decision,
      ...(decision === 'prompt' ? { why: heuristicReason(command, rendered, false, full) } : {}),
    });
  }
  const decision = entries.map(entryDecision).reduce(stricterDecision, 'allow');
  const ruleDriven = entries.some((entry) => entry.kind === 'rule' && entry.match.rule.decision === decision);
  if (decision === 'forbidden') return { decision, reason: forbiddenReason(entries) };
  if (decision === 'prompt') {
    const refusal = promptRefusal(input.approvalPolicy, ruleDriven);
    if (refusal) return { decision: 'forbidden', reason: refusal };
    const why = entries.find((entry) => entry.kind === 'heuristic' && entry.why !== undefined);
    const policyReason =
      promptReason(entries) ??
      (why?.kind === 'heuristic' ? why.why : undefined) ??
      'the approval policy asks for it';
    return { decision, ruleDriven, policyReason };
  }
  return { decision: 'allow', ruleDriven };
}

/**
 * The sub-commands policy judges: the commands of a plain shell script; else the single command of a
 * heredoc script (`complex`: never known-safe, never auto-amended); else the argv itself, with the
 * literal commands nested in the script for `prompt` / `forbidden` rules.
 */
function commandsForPolicy(argv: readonly string[], bash: BashParser) {
  const invocation = shellInvocation(argv);
  if (invocation) {
    const analysis = bash.analyze(invocation.script);
    if (analysis.plain && analysis.plain.length > 0) {
      return { commands: analysis.plain, complex: false, nested: [] };
    }
    if (analysis.heredoc) return { commands: [analysis.heredoc], complex: true, nested: [] };
    return { commands: [argv], complex: false, nested: analysis.commands };
  }
  return { commands: [argv], complex: false, nested: [] };
}

/** The decision for a command no rule matched (the fallback of docs/reference/orchestrator.md §3). */
function fallbackDecision(
  command: readonly string[],
  complex: boolean,
  input: ApprovalRequirementInput,
): Decision {
  const policy = approvalPolicyName(input.approvalPolicy);
  const { bash, platform } = input;
  if (policy === 'untrusted' && !complex && isKnownSafeCommand(command, { platform, bash })) return 'allow';
  if (isDangerousCommand(command, { bash })) {
    // Prefer asking; with prompts switched off, refuse, unless no sandbox was wanted in the first place.
    if (policy !== 'never') return 'prompt';
    return input.fileSystemKind === 'restricted' ? 'forbidden' : 'allow';
  }
  switch (policy) {
    case 'never':
    case 'on-failure':
      return 'allow';
    case 'untrusted':
      return 'prompt';
    case 'on-request':
    case 'granular':
      if (input.fileSystemKind !== 'restricted') return 'allow';
      return input.sandboxPermissions === 'use_default' ? 'allow' : 'prompt';
  }
}

/** Why the heuristics ask about `command`, for the person asked. */
function heuristicReason(
  command: readonly string[],
  rendered: string,
  complex: boolean,
  input: ApprovalRequirementInput,
): string {
  if (isDangerousCommand(command, { bash: input.bash }))
    return `\`${rendered}\` force-deletes files: ux asks even where the sandbox would hold`;
  const policy = approvalPolicyName(input.approvalPolicy);
  if (policy === 'untrusted')
    return complex
      ? 'approval policy "untrusted": a script with a heredoc is never known to be read-only'
      : `approval policy "untrusted": \`${rendered}\` is not a known read-only command`;
  if (input.sandboxPermissions === 'require_escalated')
    return 'the model asked to run it outside the sandbox (sandbox_permissions "require_escalated")';
  if (input.sandboxPermissions === 'with_additional_permissions')
    return 'the model asked for more than the sandbox allows (sandbox_permissions "with_additional_permissions")';
  return `approval policy "${policy}" asks for it`;
}

function entryDecision(entry: Entry): Decision {
  return entry.kind === 'rule' ? entry.match.rule.decision : entry.decision;
}

/** Why a prompt becomes a rejection under `never` or a granular policy that switched it off. */
function promptRefusal(policy: ApprovalPolicy, ruleDriven: boolean): string | undefined {
  if (policy === 'never') return NEVER_PROMPT_REASON;
  if (typeof policy === 'object') {
    if (ruleDriven) return policy.granular.rules ? undefined : GRANULAR_RULES_REASON;
    return policy.granular.sandbox_approval ? undefined : GRANULAR_SANDBOX_REASON;
  }
  return undefined;
}

/** The most specific (longest) rule match with a decision. */
function mostSpecific(entries: readonly Entry[], decision: Decision) {
  let best: (Entry & { kind: 'rule' }) | undefined;
  for (const entry of entries) {
    if (entry.kind !== 'rule' || entry.match.rule.decision !== decision) continue;
    if (!best || entry.match.matchedPrefix.length > best.match.matchedPrefix.length) best = entry;
  }
  return best;
}

/**
 * The refusal the model and the person read; it quotes the command's words, so they are shown as
 * escapes (`readableText`), never as control characters. (Prompt reasons stay raw: the approval
 * prompt escapes them and says so.)
 */
function forbiddenReason(entries: readonly Entry[]): string {
  const rule = mostSpecific(entries, 'forbidden');
  if (rule) {
    const { justification } = rule.match.rule;
    if (justification !== undefined) return `\`${readableText(rule.rendered)}\` rejected: ${justification}`;
    return `\`${readableText(rule.rendered)}\` rejected: policy forbids commands starting with \`${readableText(shlexJoin(rule.match.matchedPrefix))}\``;
  }
  const heuristic = entries.find((entry) => entry.kind === 'heuristic' && entry.decision === 'forbidden')!;
  return `\`${readableText(heuristic.rendered)}\` rejected: blocked by policy`;
}

function promptReason(entries: readonly Entry[]): string | undefined {
  const rule = mostSpecific(entries, 'prompt');
  if (!rule) return undefined;
  const { justification } = rule.match.rule;
  return justification === undefined
    ? `\`${rule.rendered}\` requires approval by policy`
    : `\`${rule.rendered}\` requires approval: ${justification}`;
}

function firstHeuristic(entries: readonly Entry[], decision: Decision): string[] | undefined {
  for (const entry of entries)
    if (entry.kind === 'heuristic' && entry.decision === decision) return [...entry.command];
  return undefined;
}

/**
 * The model's `prefix_rule`, offered as an amendment only when it is specific (not a bare shell or
 * interpreter), no rule already matched, and saving it would let every sub-command through.
 */
function requestedAmendment(
  input: ApprovalRequirementInput,
  commands: readonly (readonly string[])[],
  fallback: (command: readonly string[]) => Decision,
): string[] | undefined {
  const prefix = input.prefixRule;
  if (!prefix || prefix.length === 0 || prefix.some((word) => word === '')) return undefined;
  if (isOpenEnded(prefix)) return undefined;
  const amended = input.execPolicy.withRule({
    pattern: prefix,
    decision: 'allow',
    source: { file: '(proposed amendment)' },
  });
  const allowsAll = commands.every((command) => {
    const matches = amended.matches(command);
    const decision =
      matches.length > 0
        ? matches.map((match) => match.rule.decision).reduce(stricterDecision)
        : fallback(command);
    return decision === 'allow';
  });
  return allowsAll ? [...prefix] : undefined;
}

/**
 * A shell, interpreter or wrapper followed by nothing but options (`sh`, `python3 -c`, `bash -lc`,
 * `env -i`): a rule for it would allow anything.
 */
export function isOpenEnded(prefix: readonly string[]): boolean {
  if (!OPEN_ENDED_PROGRAMS.has(executableName(prefix[0]!))) return false;
  return prefix.slice(1).every((word) => word.startsWith('-'));
}

/** A derived amendment, unless it is open-ended. */
function specific(prefix: string[] | undefined): string[] | undefined {
  return prefix && !isOpenEnded(prefix) ? prefix : undefined;
}
