import { UxError } from '@ux/protocol/core';
import { describeAssignment, type FeatureAssignment, type ResolvedFeature } from './feature-assignment.js';
import { type FeatureStage, findFeature, stageLabel } from './feature-registry.js';

/** How unified exec runs: not at all, through the user's shell, or through the zsh fork. */
export type UnifiedExecMode = 'disabled' | 'direct' | 'zsh-fork';

export interface ModeFlags {
  shell_tool: boolean;
  unified_exec: boolean;
  shell_zsh_fork: boolean;
  unified_exec_zsh_fork: boolean;
}

export type ModeFlagKey = keyof ModeFlags;

/** Where a flag's value came from; `stage` defaults to the registry's. */
export type ModeProvenance = Pick<ResolvedFeature, 'key' | 'source'> & { stage?: FeatureStage };

/** What the collapse gives: the flags, and, when known, where each value came from. */
export interface ModeInput {
  flags: ModeFlags;
  /** Every resolved feature with the layer that set it (`resolveFeatures` of `@ux/config`). */
  features?: readonly ModeProvenance[];
  /** The platform whose built-in defaults apply. */
  platform?: NodeJS.Platform;
}

/**
 * What one flag did in the collapse. `on` lets the collapse read the next flag; the steps that name a
 * mode settle it; `gate-cannot-enable` and `gate-nothing-to-compose` say why an enabled composition gate
 * changed nothing.
 */
export type ModeStep =
  | 'no-shell-tool'
  | 'on'
  | 'unified-exec-off'
  | 'gate-cannot-enable'
  | 'zsh-fork-off'
  | 'gate-nothing-to-compose'
  | 'not-composed'
  | 'composed';

/** One fact the collapse read, in the order it read them. */
export interface ModeReason {
  flag: ModeFlagKey;
  enabled: boolean;
  stage: FeatureStage;
  step: ModeStep;
  /** Set on the one reason that settled the mode. */
  mode?: UnifiedExecMode;
  /** The layer that set the value (a default, a file:line, a profile, a flag, the requirements), when known. */
  source?: FeatureAssignment;
  /** The platform whose built-in default the value is, when no layer changed it. */
  platform?: NodeJS.Platform;
}

export interface FeatureModeDecision {
  mode: UnifiedExecMode;
  /** The chain of facts that decided `mode`; exactly one of them carries it. */
  reasons: ModeReason[];
}

/**
 * The collapse of the three flags (plus `shell_tool`) into one mode, before any tool is planned, with
 * the facts that decided it. `unified_exec_zsh_fork` is a composition gate: it never turns on unified
 * exec or the zsh fork. This is the only place the collapse is written; `explainFeatureMode` renders
 * its reasons and the tool plan reads its mode.
 */
export function collapseFeatureMode(input: ModeInput): FeatureModeDecision {
  const { flags } = input;
  const reasons: ModeReason[] = [];
  const read = (flag: ModeFlagKey, step: ModeStep, mode?: UnifiedExecMode) => {
    reasons.push(fact(input, flag, step, mode));
  };

  if (!flags.shell_tool) read('shell_tool', 'no-shell-tool', 'disabled');
  else {
    read('shell_tool', 'on');
    if (!flags.unified_exec) {
      read('unified_exec', 'unified-exec-off', 'disabled');
      if (flags.unified_exec_zsh_fork) read('unified_exec_zsh_fork', 'gate-cannot-enable');
    } else {
      read('unified_exec', 'on');
      if (!flags.shell_zsh_fork) {
        read('shell_zsh_fork', 'zsh-fork-off', 'direct');
        if (flags.unified_exec_zsh_fork) read('unified_exec_zsh_fork', 'gate-nothing-to-compose');
      } else {
        read('shell_zsh_fork', 'on');
        if (flags.unified_exec_zsh_fork) read('unified_exec_zsh_fork', 'composed', 'zsh-fork');
        else read('unified_exec_zsh_fork', 'not-composed', 'disabled');
      }
    }
  }
  return { mode: settledMode(reasons), reasons };
}

/** The mode the reasons settled on: the one reason that carries a mode. */
function settledMode(reasons: readonly ModeReason[]): UnifiedExecMode {
  const settled = reasons.filter((reason) => reason.mode !== undefined);
  if (settled.length !== 1)
    throw new UxError(
      'invalid_arguments',
      `${settled.length} of these reasons name a mode; exactly one must (the one that settled it)`,
    );
  return settled[0]!.mode!;
}

function fact(input: ModeInput, flag: ModeFlagKey, step: ModeStep, mode?: UnifiedExecMode): ModeReason {
  const given = input.features?.find((feature) => feature.key === flag);
  const source = given?.source;
  return {
    flag,
    enabled: input.flags[flag],
    stage: given?.stage ?? findFeature(flag)!.definition.stage,
    step,
    ...(mode === undefined ? {} : { mode }),
    ...(source ? { source } : {}),
    ...(input.platform !== undefined && source?.layer === 'default' ? { platform: input.platform } : {}),
  };
}

/**
 * The collapse in words, rendered from its reasons only (never from the flags again):
 * `mode disabled: shell_tool is on (the default on linux); …`. The mode named is the one the settling
 * reason carries.
 */
export function explainFeatureMode(decision: Pick<FeatureModeDecision, 'reasons'>): string {
  const mode = settledMode(decision.reasons);
  return `mode ${mode}: ${decision.reasons.map(reasonText).join('; ')}`;
}

/** One reason in words: the flag, its value, why it has it, and what that did. */
export function reasonText(reason: ModeReason): string {
  const value = `${reason.flag} is ${reason.enabled ? 'on' : 'off'}${provenanceText(reason)}`;
  switch (reason.step) {
    case 'no-shell-tool':
      return `${value}, so no shell tool is offered at all`;
    case 'on':
    case 'unified-exec-off':
    case 'zsh-fork-off':
      return value;
    case 'gate-cannot-enable':
      return `${value}, but it only composes unified_exec and cannot turn it on`;
    case 'gate-nothing-to-compose':
      return `${value}, but with shell_zsh_fork off it has nothing to compose`;
    case 'not-composed':
      return `${value}, so unified_exec and shell_zsh_fork do not compose: the zsh fork keeps its standalone shell tool`;
    case 'composed':
      return `${value}, so unified_exec and shell_zsh_fork compose`;
  }
}

/** ` (under development; --enable shell_zsh_fork)`, ` (the default on win32)`, or nothing. */
function provenanceText(reason: ModeReason): string {
  const parts: string[] = [];
  if (reason.stage !== 'stable') parts.push(stageLabel(reason.stage));
  const { source } = reason;
  if (source === undefined) {
    // Only the value is known (the flags were given without where they came from).
  } else if (source.layer === 'default') {
    parts.push(`the default${reason.platform === undefined ? '' : ` on ${reason.platform}`}`);
  } else if (source.layer === 'managed') {
    parts.push(`pinned by the requirements: ${describeAssignment(source)}`);
  } else {
    parts.push(describeAssignment(source));
  }
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`;
}
