import { approvalPolicyName, hasDenyRead } from '@ux/protocol/core';
import type { DoorContext } from './door-context.js';
import { nameDenial } from './name-denial.js';
import type { ResponseParts } from './render-response.js';

/** One wait of a command, as the door saw it: the evidence `nameDenial` judges. */
export interface WaitEvidence {
  output: string;
  exitCode?: number;
  cwd: string;
  remote: boolean;
  /** When this wait started (`Date.now()`): proxy refusals from then on count. */
  since: number;
  earlyDenied: boolean;
  /** The tool whose call started the process: only `exec_command` can ask for escalation. */
  tool: 'exec_command' | 'shell_command';
  /** The backend the process ran in (`none`: no sandbox, nothing to blame). */
  sandboxType: string;
}

/**
 * The denial of one wait, named, with what to do next: `denial`, `sandboxDenied` and `nextStep` for the
 * receipt, or nothing when the failure does not look like the sandbox's doing.
 */
export function denialParts(
  door: DoorContext,
  wait: WaitEvidence,
): Pick<ResponseParts, 'denial' | 'nextStep' | 'sandboxDenied'> {
  // No sandbox, nothing to blame.
  if (wait.sandboxType === 'none') return {};
  const policy = door.orchestrator.policy;
  const canEscalate =
    wait.tool === 'exec_command' &&
    approvalPolicyName(door.orchestrator.approvalPolicy) === 'on-request' &&
    door.reviewerCanAsk() &&
    !hasDenyRead(policy.fileSystem);
  const named = nameDenial({
    output: wait.output,
    ...(wait.exitCode === undefined ? {} : { exitCode: wait.exitCode }),
    policy,
    cwd: wait.cwd,
    remote: wait.remote,
    proxyRefusals: door.proxyRefusalsSince(wait.since),
    earlyDenied: wait.earlyDenied,
    canEscalate,
  });
  // An early failure whose output names a cause the policy allowed (a mode-000 file in the workspace)
  // is the command's own: nameDenial names an early denial it cannot explain otherwise.
  if (!named) return {};
  return { sandboxDenied: true, denial: named.denial, nextStep: named.nextStep };
}
