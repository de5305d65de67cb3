import { describe, expect, it } from 'vitest';
import { planTools } from './tool-plan.js';

const DIRECT = { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false };
const ZSH_FORK = { shell_tool: true, unified_exec: true, shell_zsh_fork: true, unified_exec_zsh_fork: true };
const ZSH = { zshPath: '/opt/zsh/bin/zsh', execveWrapperPath: '/opt/zsh/libexec/execve-wrapper' };

describe('planTools', () => {
  it('plans exec_command and write_stdin through the user shell in direct mode', () => {
    expect(planTools({ flags: DIRECT, platform: 'linux' })).toEqual({
      mode: 'direct',
      modeReasons: [
        { flag: 'shell_tool', enabled: true, stage: 'stable', step: 'on' },
        { flag: 'unified_exec', enabled: true, stage: 'stable', step: 'on' },
        {
          flag: 'shell_zsh_fork',
          enabled: false,
          stage: 'under_development',
          step: 'zsh-fork-off',
          mode: 'direct',
        },
      ],
      tools: ['exec_command', 'write_stdin'],
      shell: { kind: 'direct' },
      execCommandVariant: { shell: true, login: true, environmentId: false, additionalPermissions: false },
      shellSnapshot: false,
      reasons: [
        'mode direct: shell_tool is on; unified_exec is on; shell_zsh_fork is off (under development)',
        'tools: exec_command and write_stdin',
        "shell: direct (the command's shell, or the user's shell, with -c or -lc)",
        'shell snapshot: off; every login command runs the login files',
      ],
      warnings: [],
    });
  });

  it('sources a shell snapshot when shell_snapshot is on, and says so', () => {
    const plan = planTools({ flags: { ...DIRECT, shell_snapshot: true }, platform: 'linux' });
    expect(plan.shellSnapshot).toBe(true);
    expect(plan.reasons.at(-1)).toMatch(/^shell snapshot: the login shell runs once per session/);
    expect(
      planTools({ flags: { ...DIRECT, shell_tool: false, shell_snapshot: true }, platform: 'linux' })
        .shellSnapshot,
    ).toBe(false);
  });

  it('launches through the configured zsh fork when every precondition holds, and hides `shell`', () => {
    const plan = planTools({ flags: ZSH_FORK, platform: 'linux', userShell: '/usr/bin/zsh', zshFork: ZSH });
    expect(plan.mode).toBe('zsh-fork');
    expect(plan.shell).toEqual({ kind: 'zsh-fork', ...ZSH });
    expect(plan.execCommandVariant.shell).toBe(false);
    expect(plan.warnings).toEqual([]);
  });

  it('keeps `shell` when a remote environment exists, and runs remote commands direct', () => {
    const plan = planTools({
      flags: ZSH_FORK,
      platform: 'linux',
      userShell: '/bin/zsh',
      zshFork: ZSH,
      environments: [
        { id: 'local', remote: false },
        { id: 'box', remote: true },
      ],
    });
    expect(plan.shell.kind).toBe('zsh-fork');
    expect(plan.execCommandVariant).toMatchObject({ shell: true, environmentId: true });
    expect(plan.reasons).toContain('remote environments always run direct');
    const remoteOnly = planTools({
      flags: ZSH_FORK,
      platform: 'linux',
      userShell: '/bin/zsh',
      zshFork: ZSH,
      environments: [{ id: 'box', remote: true }],
    });
    expect(remoteOnly.shell).toEqual({ kind: 'direct' });
    expect(remoteOnly.execCommandVariant.shell).toBe(true);
  });

  it('runs through the fork whatever the login shell is', () => {
    const plan = planTools({ flags: ZSH_FORK, platform: 'linux', userShell: '/bin/bash', zshFork: ZSH });
    expect(plan.shell).toEqual({ kind: 'zsh-fork', ...ZSH });
    expect(plan.zshForkUnavailable).toBeUndefined();
  });

  it('never falls back to direct: a missing fork is named, with how to get it, and no shell is planned', () => {
    const plan = planTools({
      flags: ZSH_FORK,
      platform: 'linux',
      userShell: '/bin/bash',
      zshFork: { zshPath: 'zsh' },
    });
    expect(plan.shell).toEqual({ kind: 'direct' });
    expect(plan.zshForkUnavailable).toBe(
      'no patched zsh: build it with `ux zsh-fork build`, or set zsh_fork.zsh_path to an absolute path; no execve wrapper: reinstall ux, or set zsh_fork.execve_wrapper_path to an absolute path',
    );
    expect(plan.reasons).toContain(`shell: none (the zsh fork cannot start: ${plan.zshForkUnavailable})`);
    const windows = planTools({ flags: ZSH_FORK, platform: 'win32', userShell: 'C:\\zsh.exe', zshFork: ZSH });
    expect(windows.zshForkUnavailable).toContain('the zsh fork does not run on Windows');
  });

  it('offers shell_command when no PTY backend works', () => {
    const plan = planTools({ flags: DIRECT, platform: 'linux', ptyAvailable: false });
    expect(plan.tools).toEqual(['shell_command']);
    expect(plan.warnings).toEqual([
      'unified exec needs a PTY backend, which is not available here; offering shell_command instead',
    ]);
  });

  it('follows allow_login_shell and exec_permission_approvals in the exec_command parameters', () => {
    const plan = planTools({
      flags: { ...DIRECT, exec_permission_approvals: true },
      platform: 'linux',
      allowLoginShell: false,
    });
    expect(plan.execCommandVariant).toEqual({
      shell: true,
      login: false,
      environmentId: false,
      additionalPermissions: true,
    });
  });

  it('names the zsh fork backend of the standalone tool, and runs shell_command through it', () => {
    const plan = planTools({
      flags: { ...ZSH_FORK, unified_exec_zsh_fork: false },
      platform: 'linux',
      zshFork: ZSH,
    });
    expect(plan.tools).toEqual(['shell_command']);
    expect(plan.shell).toEqual({ kind: 'zsh-fork', ...ZSH });
    const unbuilt = planTools({ flags: { ...ZSH_FORK, unified_exec_zsh_fork: false }, platform: 'linux' });
    expect(unbuilt.zshForkUnavailable).toContain('ux zsh-fork build');
    expect(plan.reasons[1]).toBe(
      'tools: shell_command, run through the zsh fork (shell_zsh_fork without the unified_exec composition)',
    );
  });

  it('offers nothing without shell_tool', () => {
    const plan = planTools({ flags: { ...DIRECT, shell_tool: false }, platform: 'linux' });
    expect(plan.tools).toEqual([]);
    expect(plan.reasons).toEqual([
      'mode disabled: shell_tool is off, so no shell tool is offered at all',
      'tools: none (shell_tool is off)',
    ]);
  });
});
