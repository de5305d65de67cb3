import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'ux.cjs');

useLeakCheck();

/** Runs the built `ux` with its own UX_HOME and requirements file. */
function ux(args: string[], files: { config?: string; requirements?: string } = {}) {
  const home = tempDir('ux-cli-home-');
  const requirements = join(home, 'requirements.toml');
  if (files.config !== undefined) writeFileSync(join(home, 'config.toml'), files.config);
  if (files.requirements !== undefined) writeFileSync(requirements, files.requirements);
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, UX_HOME: home, UX_REQUIREMENTS: requirements, SHELL: '/bin/bash' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, home, requirements };
}

describe('ux features list', () => {
  it('lists every feature with its stage, value and source', () => {
    const result = ux(['features', 'list']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      [
        'FEATURE                    STAGE              ENABLED  SOURCE',
        'shell_tool                 stable             true     default',
        'unified_exec               stable             true     default',
        'shell_zsh_fork             under development  false    default',
        'unified_exec_zsh_fork      under development  false    default',
        'exec_permission_approvals  under development  false    default',
        'shell_snapshot             stable             true     default',
        'streamable_shell           removed            -        ignored',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toBe('');
  });

  it('reports the layer and file behind each value as JSON', () => {
    const result = ux(['features', 'list', '--json', '--enable', 'exec_permission_approvals'], {
      config: '[features]\nshell_zsh_fork = true\nunified_exec = false\n',
      requirements: '[features]\nunified_exec = true\n',
    });
    expect(result.status).toBe(0);
    const json = JSON.parse(result.stdout);
    const byKey = Object.fromEntries(json.features.map((f: { key: string }) => [f.key, f]));
    expect(byKey.shell_zsh_fork).toMatchObject({
      enabled: true,
      source: { layer: 'user', file: join(result.home, 'config.toml'), line: 2, column: 1 },
    });
    expect(byKey.unified_exec).toMatchObject({
      enabled: true,
      source: { layer: 'managed', file: result.requirements, line: 2 },
      overridden: [
        { layer: 'default', enabled: true },
        { layer: 'user', enabled: false, line: 3 },
      ],
    });
    expect(byKey.exec_permission_approvals).toMatchObject({
      enabled: true,
      source: { layer: 'cli', flag: '--enable exec_permission_approvals' },
    });
    expect(json.warnings).toContain(
      `features.unified_exec = false in ${join(result.home, 'config.toml')}:3:1 is overridden: features.unified_exec = true in ${result.requirements}:2:1 pins unified_exec to true`,
    );
  });

  it('prints warnings on stderr in text mode', () => {
    const result = ux(['features', 'list'], { config: '[features]\nstreamable_shell = true\n' });
    expect(result.status).toBe(0);
    expect(result.stderr).toBe(
      `ux: warning: features.streamable_shell at ${join(result.home, 'config.toml')}:2: feature "streamable_shell" was removed (superseded by unified_exec); the setting is ignored\n`,
    );
  });
});

describe('ux features explain', () => {
  it.each([
    [[], 'direct', ['exec_command', 'write_stdin']],
    [['--disable', 'unified_exec'], 'disabled', ['shell_command']],
    [['--enable', 'shell_zsh_fork'], 'disabled', ['shell_command']],
    [
      ['--enable', 'shell_zsh_fork', '--enable', 'unified_exec_zsh_fork'],
      'zsh-fork',
      ['exec_command', 'write_stdin'],
    ],
    [['--enable', 'unified_exec_zsh_fork'], 'direct', ['exec_command', 'write_stdin']],
    [['--disable', 'shell_tool'], 'disabled', []],
  ])('%j gives mode %s', (flags, mode, tools) => {
    const result = ux(['features', 'explain', '--json', ...flags]);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ mode, tools });
  });

  it('names the requirement that pinned the flag which decided the mode, in words and as JSON', () => {
    const files = { requirements: '[features]\nunified_exec = false\n' };
    const text = ux(['features', 'explain'], files);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(
      `mode disabled: shell_tool is on (the default on ${process.platform}); unified_exec is off (pinned by the requirements: features.unified_exec = false in ${text.requirements}:2:1)`,
    );
    const json = ux(['features', 'explain', '--json'], files);
    expect(JSON.parse(json.stdout).modeReasons).toEqual([
      {
        flag: 'shell_tool',
        enabled: true,
        stage: 'stable',
        step: 'on',
        source: { key: 'shell_tool', enabled: true, layer: 'default' },
        platform: process.platform,
      },
      {
        flag: 'unified_exec',
        enabled: false,
        stage: 'stable',
        step: 'unified-exec-off',
        mode: 'disabled',
        source: {
          key: 'unified_exec',
          enabled: false,
          layer: 'managed',
          location: { file: json.requirements, line: 2, column: 1 },
        },
      },
    ]);
  });

  it('uses the configured zsh fork when every precondition holds', () => {
    const result = ux(['features', 'explain', '--json'], {
      config: `[features]
shell_zsh_fork = true
unified_exec_zsh_fork = true
[zsh_fork]
zsh_path = "/opt/zsh/bin/zsh"
execve_wrapper_path = "/opt/zsh/libexec/wrapper"
`,
    });
    const json = JSON.parse(result.stdout);
    // The login shell (bash here) does not matter: the fork is the session's shell.
    expect(json.shell).toEqual({
      kind: 'zsh-fork',
      zshPath: '/opt/zsh/bin/zsh',
      execveWrapperPath: '/opt/zsh/libexec/wrapper',
    });
  });

  it('explains the plan in words', () => {
    const result = ux(['features', 'explain', '--enable', 'shell_zsh_fork']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Mode: disabled');
    expect(result.stdout).toContain(
      `mode disabled: shell_tool is on (the default on ${process.platform}); unified_exec is on (the default on ${process.platform}); shell_zsh_fork is on (under development; --enable shell_zsh_fork); unified_exec_zsh_fork is off (under development; the default on ${process.platform}), so unified_exec and shell_zsh_fork do not compose: the zsh fork keeps its standalone shell tool`,
    );
    expect(result.stdout).toContain('  shell_zsh_fork         on   command line (--enable shell_zsh_fork)');
    expect(result.stderr).toBe(
      'ux: warning: shell_zsh_fork is under development and may change or break (enabled by --enable shell_zsh_fork)\n',
    );
  });
});

describe('ux bad input', () => {
  it('rejects an unknown feature with close matches (exit 2)', () => {
    const result = ux(['features', 'list', '--enable', 'unifed_exec']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'ux: unknown feature "unifed_exec" for --enable (did you mean "unified_exec"?)\n',
    );
    expect(result.stdout).toBe('');
  });

  it('rejects an unknown option, subcommand and command (exit 2)', () => {
    expect(ux(['features', 'list', '--colour'])).toMatchObject({
      status: 2,
      stderr: "ux: unknown option --colour\nRun 'ux features --help' for usage.\n",
    });
    expect(ux(['features', 'list', '--enabel', 'x'])).toMatchObject({
      status: 2,
      stderr:
        'ux: unknown option --enabel (did you mean "--enable"?)\nRun \'ux features --help\' for usage.\n',
    });
    expect(ux(['features', 'list', '--enable'])).toMatchObject({
      status: 2,
      stderr: "ux: option --enable needs a value\nRun 'ux features --help' for usage.\n",
    });
    expect(ux(['features', 'show'])).toMatchObject({
      status: 2,
      stderr: `ux: unknown features command "show"; expected list or explain\nRun 'ux features --help' for usage.\n`,
    });
    expect(ux(['fetaures'])).toMatchObject({
      status: 2,
      stderr: `ux: unknown command "fetaures" (did you mean "features"?)\nRun 'ux --help' for usage.\n`,
    });
  });

  it('takes -c overrides as ux exec does, and names a bad one', () => {
    const result = ux(['features', 'explain', '-c', 'features.unified_exec=false']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('disabled');
    const listed = ux(['features', 'list', '--json', '-c', 'features.unified_exec=false']);
    const byKey = Object.fromEntries(
      JSON.parse(listed.stdout).features.map((f: { key: string }) => [f.key, f]),
    );
    expect(byKey.unified_exec).toMatchObject({
      enabled: false,
      source: { layer: 'user', file: '-c features.unified_exec=false' },
    });
    expect(ux(['features', 'list', '-c', 'features.unifed_exec=false'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(
        /^ux: -c features\.unifed_exec=false: unknown feature "unifed_exec" \(did you mean "unified_exec"\?\)\nRun 'ux features --help' for usage\.\n$/,
      ),
    });
  });

  it('reports malformed config with file:line:column (exit 1)', () => {
    const result = ux(['features', 'list'], { config: '[features]\nunified_exec = tru\n' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`^ux: ${join(result.home, 'config.toml')}:2:16: invalid TOML: .+\\n$`),
    );
  });

  it('reports a bad value in requirements with its location', () => {
    const result = ux(['features', 'list'], {
      requirements: 'allowed_sandbox_modes = ["read-only", "yolo"]\n',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `ux: ${result.requirements}:1:39: allowed_sandbox_modes[1]: unknown value "yolo"; expected one of read-only, workspace-write, danger-full-access, external-sandbox\n`,
    );
  });

  it('rejects an unknown profile (exit 2)', () => {
    const result = ux(['features', 'list', '--profile', 'wrok'], { config: '[profiles.work]\n' });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      `ux: unknown profile "wrok" (did you mean "work"?); profiles defined in ${join(result.home, 'config.toml')}: work\n`,
    );
  });

  it('reports a config path that is a directory', () => {
    const home = tempDir('ux-cli-dir-');
    mkdirSync(join(home, 'config.toml'));
    const result = spawnSync(process.execPath, [BIN, 'features', 'list'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, UX_HOME: home, UX_REQUIREMENTS: join(home, 'none.toml') },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`ux: ${join(home, 'config.toml')}: is a directory, not a file\n`);
  });

  it('prints help and version', () => {
    expect(ux(['--help'])).toMatchObject({ status: 0, stdout: expect.stringContaining('features explain') });
    expect(ux(['features', '--help'])).toMatchObject({
      status: 0,
      stdout: expect.stringContaining('--enable <feature>'),
    });
    expect(ux([])).toMatchObject({ status: 2, stderr: expect.stringContaining('Usage: ux <command>') });
    expect(ux(['--version']).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
