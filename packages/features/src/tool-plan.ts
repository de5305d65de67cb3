import { type ExecCommandVariant, isAbsolutePath, type ToolName } from '@ux/protocol/core';
import {
  collapseFeatureMode,
  explainFeatureMode,
  type ModeFlags,
  type ModeProvenance,
  type ModeReason,
  type UnifiedExecMode,
} from './feature-mode.js';

export interface ToolPlanInput {
  flags: ModeFlags & { exec_permission_approvals?: boolean; shell_snapshot?: boolean };
  platform: NodeJS.Platform;
  /**
   * Where each flag's value came from (`resolveFeatures(…).features` of `@ux/config`); the mode's
   * reasons name the file:line, flag, profile, requirement or platform default when given.
   */
  features?: readonly ModeProvenance[];
  /** The user's login shell (informational: the zsh fork replaces it). */
  userShell?: string;
  /** Paths of the patched zsh and its execve wrapper, when configured. */
  zshFork?: { zshPath?: string; execveWrapperPath?: string };
  /** The session's environments; default one local environment. */
  environments?: readonly { id: string; remote: boolean }[];
  /** Config `allow_login_shell`; default true. */
  allowLoginShell?: boolean;
  /** Whether a PTY backend works here; default true. */
  ptyAvailable?: boolean;
}

/** How local commands are launched: the user's shell, or the configured zsh fork. */
export type ShellMode = { kind: 'direct' } | { kind: 'zsh-fork'; zshPath: string; execveWrapperPath: string };

export interface ToolPlan {
  mode: UnifiedExecMode;
  /** The facts that decided `mode` (`collapseFeatureMode`); `reasons[0]` is them in words. */
  modeReasons: ModeReason[];
  /** The tools the model sees. */
  tools: ToolName[];
  /** How local commands are launched; remote environments always use `direct`. */
  shell: ShellMode;
  /** The parameters `exec_command` offers. */
  execCommandVariant: ExecCommandVariant;
  /**
   * Login commands source a snapshot of the login shell taken once per session (`shell_snapshot`)
   * instead of running the login files every time.
   */
  shellSnapshot: boolean;
  /** The plan in words, one line per decision. */
  reasons: string[];
  /** What a user must see. */
  warnings: string[];
  /**
   * Set when the flags ask for the zsh fork and it cannot start (why, in words). Hosts must refuse to
   * run commands then: running them direct would silently drop the per-exec policy.
   */
  zshForkUnavailable?: string;
}

/** Decides which model tools exist and how commands launch, from the collapsed feature mode. */
export function planTools(input: ToolPlanInput): ToolPlan {
  const { flags } = input;
  const environments = input.environments ?? [{ id: 'local', remote: false }];
  const hasRemote = environments.some((environment) => environment.remote);
  const hasLocal = environments.some((environment) => !environment.remote);
  const decision = collapseFeatureMode(input);
  // The fact that settled the mode decides the tools; the flags are not read for the mode again.
  const settled = decision.reasons.find((reason) => reason.mode !== undefined)!;
  const reasons = [explainFeatureMode(decision)];
  const warnings: string[] = [];

  let tools: ToolName[];
  if (settled.step === 'no-shell-tool') {
    tools = [];
    reasons.push('tools: none (shell_tool is off)');
  } else if (decision.mode === 'disabled') {
    tools = ['shell_command'];
    reasons.push(
      flags.shell_zsh_fork
        ? 'tools: shell_command, run through the zsh fork (shell_zsh_fork without the unified_exec composition)'
        : 'tools: shell_command (one-shot commands; unified exec is not enabled)',
    );
  } else if (input.ptyAvailable === false) {
    tools = ['shell_command'];
    warnings.push(
      'unified exec needs a PTY backend, which is not available here; offering shell_command instead',
    );
    reasons.push('tools: shell_command (no PTY backend)');
  } else {
    tools = ['exec_command', 'write_stdin'];
    reasons.push('tools: exec_command and write_stdin');
  }

  // The zsh fork runs what the shell tool runs: exec_command in ZshFork mode, shell_command when
  // shell_zsh_fork is on without the unified-exec composition (Codex's ZshFork shell backend).
  const forkWanted =
    flags.shell_zsh_fork &&
    hasLocal &&
    (decision.mode === 'zsh-fork' || (decision.mode === 'disabled' && tools.includes('shell_command')));
  let shell: ShellMode = { kind: 'direct' };
  let zshForkUnavailable: string | undefined;
  if (forkWanted) {
    const missing = zshForkPreconditions(input);
    if (missing.length === 0) {
      shell = {
        kind: 'zsh-fork',
        zshPath: input.zshFork!.zshPath!,
        execveWrapperPath: input.zshFork!.execveWrapperPath!,
      };
      reasons.push(
        `shell: zsh fork (${shell.zshPath}, execve wrapper ${shell.execveWrapperPath}) for local commands, whatever the login shell; every program it starts is checked by policy`,
      );
    } else {
      // Never a silent fallback: per-exec policy is what the flags asked for.
      zshForkUnavailable = missing.join('; ');
      reasons.push(`shell: none (the zsh fork cannot start: ${zshForkUnavailable})`);
    }
  } else if (tools.length > 0) {
    reasons.push("shell: direct (the command's shell, or the user's shell, with -c or -lc)");
  }
  if (hasRemote && tools.length > 0) reasons.push('remote environments always run direct');
  const shellSnapshot = tools.length > 0 && flags.shell_snapshot === true;
  if (tools.length > 0)
    reasons.push(
      shellSnapshot
        ? 'shell snapshot: the login shell runs once per session (again when a login file changes); commands source what it set up (bash, zsh, sh; not PowerShell or cmd)'
        : 'shell snapshot: off; every login command runs the login files',
    );

  const variant: ExecCommandVariant = {
    // Under the zsh fork the shell is fixed; a remote environment still lets the model pick one.
    shell: !(shell.kind === 'zsh-fork' && !hasRemote),
    login: input.allowLoginShell !== false,
    environmentId: environments.length > 1,
    additionalPermissions: flags.exec_permission_approvals === true,
  };

  return {
    mode: decision.mode,
    modeReasons: decision.reasons,
    tools,
    shell,
    execCommandVariant: variant,
    shellSnapshot,
    reasons,
    warnings,
    ...(zshForkUnavailable === undefined ? {} : { zshForkUnavailable }),
  };
}

function zshForkPreconditions(input: ToolPlanInput): string[] {
  const missing: string[] = [];
  if (input.platform === 'win32') missing.push('the zsh fork does not run on Windows');
  const { zshPath, execveWrapperPath } = input.zshFork ?? {};
  if (!zshPath || !isAbsolutePath(zshPath))
    missing.push(
      'no patched zsh: build it with `ux zsh-fork build`, or set zsh_fork.zsh_path to an absolute path',
    );
  if (!execveWrapperPath || !isAbsolutePath(execveWrapperPath)) {
    missing.push('no execve wrapper: reinstall ux, or set zsh_fork.execve_wrapper_path to an absolute path');
  }
  return missing;
}
