/** How unified exec runs: not at all, through the user's shell, or through the zsh fork. */
export type UnifiedExecMode = 'disabled' | 'direct' | 'zsh-fork';

export interface ModeFlags {
  shell_tool: boolean;
  unified_exec: boolean;
  shell_zsh_fork: boolean;
  unified_exec_zsh_fork: boolean;
}

/**
 * The collapse of the three flags (plus `shell_tool`) into one mode, before any tool is planned.
 * `unified_exec_zsh_fork` is a composition gate: it never turns on unified exec or the zsh fork.
 */
export function collapseFeatureMode(flags: ModeFlags): UnifiedExecMode {
  if (!flags.shell_tool || !flags.unified_exec) return 'disabled';
  if (flags.shell_zsh_fork) return flags.unified_exec_zsh_fork ? 'zsh-fork' : 'disabled';
  return 'direct';
}

/** The collapse with the reason in words. */
export function explainFeatureMode(flags: ModeFlags): { mode: UnifiedExecMode; reason: string } {
  const mode = collapseFeatureMode(flags);
  if (!flags.shell_tool) return { mode, reason: 'shell_tool is off, so no shell tool is offered at all' };
  if (!flags.unified_exec) {
    return {
      mode,
      reason: `unified_exec is off${flags.unified_exec_zsh_fork ? ' (unified_exec_zsh_fork only composes it and cannot turn it on)' : ''}`,
    };
  }
  if (flags.shell_zsh_fork) {
    return flags.unified_exec_zsh_fork
      ? {
          mode,
          reason: 'unified_exec, shell_zsh_fork and the composition gate unified_exec_zsh_fork are all on',
        }
      : {
          mode,
          reason:
            'unified_exec and shell_zsh_fork are both on but unified_exec_zsh_fork is off, so they do not compose: the zsh fork keeps its standalone shell tool',
        };
  }
  return {
    mode,
    reason: `unified_exec is on and shell_zsh_fork is off${
      flags.unified_exec_zsh_fork ? ' (unified_exec_zsh_fork has nothing to compose)' : ''
    }`,
  };
}
