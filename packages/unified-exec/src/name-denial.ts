import type { EffectivePolicy, NetworkAccessEvent, SandboxDenial } from '@ux/protocol/core';

/** What the door knows about one wait of a command, for judging whether the sandbox blocked it. */
export interface DenialEvidence {
  /** What the command printed in this wait (text). */
  output: string;
  /** When it exited in this wait. */
  exitCode?: number;
  /** The policy the command ran under (its environment's). */
  policy: EffectivePolicy;
  /** Its working directory (relative paths in messages resolve here). */
  cwd: string;
  /** Ran on an exec-server. */
  remote: boolean;
  /** Refused proxy exchanges during this wait. */
  proxyRefusals: readonly NetworkAccessEvent[];
  /** The orchestrator caught a denial in the early-exit window. */
  earlyDenied: boolean;
  /**
   * This call could ask to run outside the sandbox (exec_command, approval policy on-request, someone
   * to ask, no deny-read): the next step says how.
   */
  canEscalate: boolean;
}

const KINDS: readonly [RegExp, SandboxDenial['kind'], string][] = [
  [/could not resolve host|name resolution|ENOTFOUND|EAI_AGAIN/i, 'dns', 'a host name could not be resolved'],
  [
    /listen EPERM|bind.*(operation not permitted|permission denied)/i,
    'listen',
    'listening on a port was refused',
  ],
  [
    /network is unreachable|connect.*(EPERM|operation not permitted)/i,
    'network',
    'a network connection was refused',
  ],
  [/read-only file system|permission denied|operation not permitted/i, 'file_write', 'a write was refused'],
];

/**
 * Names what the sandbox blocked. This version names only the denials the orchestrator caught in the
 * early-exit window; the kind comes from the words the command printed.
 */
export function nameDenial(
  evidence: DenialEvidence,
): { denial: SandboxDenial; nextStep: string } | undefined {
  if (!evidence.earlyDenied) return undefined;
  const match = KINDS.find(([pattern]) => pattern.test(evidence.output));
  const kind = match?.[1] ?? 'process';
  const what = match?.[2] ?? 'the command was stopped';
  const nextStep = evidence.canEscalate
    ? 'If the command needs this, run it again with sandbox_permissions "require_escalated" and a justification: the person is asked to let it run outside the sandbox.'
    : 'The session policy does not allow this; change the command to stay inside the sandbox, or ask the person to change the policy.';
  return { denial: { kind, message: `The sandbox blocked the command: ${what}.` }, nextStep };
}
