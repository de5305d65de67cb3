import { type ExecCommandVariant, isAbsolutePath, type ToolName } from '@ux/protocol/core';
import { explainFeatureMode, type ModeFlags, type UnifiedExecMode } from './feature-mode.js';

export interface ToolPlanInput {
  flags: ModeFlags & { exec_permission_approvals?: boolean };
  platform: NodeJS.Platform;
  /** The user's login shell, for the zsh-fork precondition. */
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
  /** The tools the model sees. */
  tools: ToolName[];
  /** How local commands are launched; remote environments always use `direct`. */
  shell: ShellMode;
  /** The parameters `exec_command` offers. */
  execCommandVariant: ExecCommandVariant;
  /** The plan in words, one line per decision. */
  reasons: string[];
  /** What a user must see. */
  warnings: string[];
}

/** Decides which model tools exist and how commands launch, from the collapsed feature mode. */
export function planTools(input: ToolPlanInput): ToolPlan {
  const { flags } = input;
  const environments = input.environments ?? [{ id: 'local', remote: false }];
  const hasRemote = environments.some((environment) => environment.remote);
  const hasLocal = environments.some((environment) => !environment.remote);
  const explained = explainFeatureMode(flags);
  const reasons = [`mode ${explained.mode}: ${explained.reason}`];
  const warnings: string[] = [];

  let tools: ToolName[];
  if (!flags.shell_tool) {
    tools = [];
    reasons.push('tools: none (shell_tool is off)');
  } else if (explained.mode === 'disabled') {
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

  let shell: ShellMode = { kind: 'direct' };
  if (explained.mode === 'zsh-fork' && tools.includes('exec_command') && hasLocal) {
    const missing = zshForkPreconditions(input);
    if (missing.length === 0) {
      shell = {
        kind: 'zsh-fork',
        zshPath: input.zshFork!.zshPath!,
        execveWrapperPath: input.zshFork!.execveWrapperPath!,
      };
      reasons.push(
        `shell: zsh fork (${shell.zshPath}, execve wrapper ${shell.execveWrapperPath}) for local commands`,
      );
    } else {
      warnings.push(`zsh-fork mode cannot start (${missing.join('; ')}); local commands run direct instead`);
      reasons.push('shell: direct (zsh-fork preconditions not met)');
    }
  } else if (tools.length > 0) {
    reasons.push("shell: direct (the command's shell, or the user's shell, with -c or -lc)");
  }
  if (hasRemote && tools.length > 0) reasons.push('remote environments always run direct');

  const variant: ExecCommandVariant = {
    // Under the zsh fork the shell is fixed; a remote environment still lets the model pick one.
    shell: !(shell.kind === 'zsh-fork' && !hasRemote),
    login: input.allowLoginShell !== false,
    environmentId: environments.length > 1,
    additionalPermissions: flags.exec_permission_approvals === true,
  };

  return { mode: explained.mode, tools, shell, execCommandVariant: variant, reasons, warnings };
}

function zshForkPreconditions(input: ToolPlanInput): string[] {
  const missing: string[] = [];
  if (input.platform === 'win32') missing.push('the zsh fork does not run on Windows');
  const shellName = input.userShell?.split(/[\\/]/).pop();
  if (shellName !== 'zsh') missing.push(`the user's shell is ${input.userShell ?? 'unknown'}, not zsh`);
  const { zshPath, execveWrapperPath } = input.zshFork ?? {};
  if (!zshPath || !isAbsolutePath(zshPath))
    missing.push('zsh_fork.zsh_path is not configured as an absolute path');
  if (!execveWrapperPath || !isAbsolutePath(execveWrapperPath)) {
    missing.push('zsh_fork.execve_wrapper_path is not configured as an absolute path');
  }
  return missing;
}
