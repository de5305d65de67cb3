import { describe, expect, it } from 'vitest';
import { collapseFeatureMode, explainFeatureMode } from './feature-mode.js';
import { planTools } from './tool-plan.js';

// shell_tool, unified_exec, shell_zsh_fork, unified_exec_zsh_fork → mode, model tools
const TRUTH_TABLE = [
  [0, 0, 0, 0, 'disabled', []],
  [0, 0, 0, 1, 'disabled', []],
  [0, 0, 1, 0, 'disabled', []],
  [0, 0, 1, 1, 'disabled', []],
  [0, 1, 0, 0, 'disabled', []],
  [0, 1, 0, 1, 'disabled', []],
  [0, 1, 1, 0, 'disabled', []],
  [0, 1, 1, 1, 'disabled', []],
  [1, 0, 0, 0, 'disabled', ['shell_command']],
  [1, 0, 0, 1, 'disabled', ['shell_command']],
  [1, 0, 1, 0, 'disabled', ['shell_command']],
  [1, 0, 1, 1, 'disabled', ['shell_command']],
  [1, 1, 0, 0, 'direct', ['exec_command', 'write_stdin']],
  [1, 1, 0, 1, 'direct', ['exec_command', 'write_stdin']],
  [1, 1, 1, 0, 'disabled', ['shell_command']],
  [1, 1, 1, 1, 'zsh-fork', ['exec_command', 'write_stdin']],
] as const;

describe('feature collapse', () => {
  it.each(TRUTH_TABLE)(
    'shell_tool=%i unified_exec=%i shell_zsh_fork=%i unified_exec_zsh_fork=%i → %s, tools %j',
    (shellTool, unifiedExec, zshFork, gate, mode, tools) => {
      const flags = {
        shell_tool: shellTool === 1,
        unified_exec: unifiedExec === 1,
        shell_zsh_fork: zshFork === 1,
        unified_exec_zsh_fork: gate === 1,
      };
      expect(collapseFeatureMode(flags)).toBe(mode);
      expect(explainFeatureMode(flags).mode).toBe(mode);
      expect(planTools({ flags, platform: 'linux' }).tools).toEqual(tools);
    },
  );

  it('never lets the composition gate turn anything on by itself', () => {
    const gateOnly = {
      shell_tool: true,
      unified_exec: false,
      shell_zsh_fork: false,
      unified_exec_zsh_fork: true,
    };
    expect(collapseFeatureMode(gateOnly)).toBe('disabled');
    expect(explainFeatureMode(gateOnly).reason).toBe(
      'unified_exec is off (unified_exec_zsh_fork only composes it and cannot turn it on)',
    );
  });

  it('explains why shell_zsh_fork alone keeps the standalone tool', () => {
    expect(
      explainFeatureMode({
        shell_tool: true,
        unified_exec: true,
        shell_zsh_fork: true,
        unified_exec_zsh_fork: false,
      }).reason,
    ).toBe(
      'unified_exec and shell_zsh_fork are both on but unified_exec_zsh_fork is off, so they do not compose: the zsh fork keeps its standalone shell tool',
    );
  });
});
