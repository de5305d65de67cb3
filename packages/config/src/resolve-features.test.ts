import { planTools } from '@ux/features';
import { UxError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { parseRequirements } from './requirements.js';
import { resolveFeatures } from './resolve-features.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';
const user = (text: string) => parseUserConfig(parseTomlDocument(text, FILE));
const requirements = (text: string) => parseRequirements(parseTomlDocument(text, REQ));

function feature(resolved: ReturnType<typeof resolveFeatures>, key: string) {
  const found = resolved.features.find((f) => f.key === key);
  if (!found) throw new Error(`no feature ${key}`);
  return found;
}

describe('resolveFeatures', () => {
  it('uses the built-in defaults, with unified_exec off on Windows', () => {
    const linux = resolveFeatures({ platform: 'linux' });
    expect(linux.flags).toEqual({
      shell_tool: true,
      unified_exec: true,
      shell_zsh_fork: false,
      unified_exec_zsh_fork: false,
      exec_permission_approvals: false,
      shell_snapshot: true,
    });
    expect(feature(linux, 'unified_exec').source).toEqual({
      key: 'unified_exec',
      enabled: true,
      layer: 'default',
    });
    expect(resolveFeatures({ platform: 'win32' }).flags.unified_exec).toBe(false);
    expect(linux.warnings).toEqual([]);
    expect(linux.features.map((f) => f.key)).not.toContain('streamable_shell');
  });

  it('layers user < profile < command line, and remembers every layer', () => {
    const config = user(
      'profile = "work"\n[features]\nunified_exec = false\nshell_zsh_fork = true\n[profiles.work.features]\nunified_exec = true\n',
    );
    const resolved = resolveFeatures({ platform: 'linux', user: config, cli: { disable: ['unified_exec'] } });
    const unified = feature(resolved, 'unified_exec');
    expect(unified.enabled).toBe(false);
    expect(unified.source).toMatchObject({ layer: 'cli', flag: '--disable unified_exec' });
    expect(unified.overridden.map((a) => [a.layer, a.enabled])).toEqual([
      ['default', true],
      ['user', false],
      ['profile', true],
    ]);
    expect(feature(resolved, 'shell_zsh_fork').source).toMatchObject({
      layer: 'user',
      location: { file: FILE, line: 4, column: 1 },
    });
    expect(resolved.profile).toEqual({ name: 'work', chosenBy: `${FILE}:1:1` });
    expect(resolved.warnings).toEqual([
      `shell_zsh_fork is under development and may change or break (enabled by features.shell_zsh_fork = true in ${FILE}:4:1)`,
    ]);
  });

  it('lets --profile pick another profile', () => {
    const config = user(
      'profile = "a"\n[profiles.a.features]\nshell_tool = false\n[profiles.b.features]\nshell_tool = true\n',
    );
    expect(resolveFeatures({ platform: 'linux', user: config }).flags.shell_tool).toBe(false);
    const chosen = resolveFeatures({ platform: 'linux', user: config, profile: 'b' });
    expect(chosen.flags.shell_tool).toBe(true);
    expect(chosen.profile).toEqual({ name: 'b', chosenBy: '--profile b' });
  });

  it('pins managed values over every layer and says which file pinned them', () => {
    const config = user('[features]\nunified_exec = false\n');
    const resolved = resolveFeatures({
      platform: 'linux',
      user: config,
      cli: { enable: ['shell_zsh_fork'] },
      requirements: requirements('[features]\nunified_exec = true\nshell_zsh_fork = false\n'),
    });
    expect(resolved.flags.unified_exec).toBe(true);
    expect(resolved.flags.shell_zsh_fork).toBe(false);
    expect(feature(resolved, 'unified_exec').source).toMatchObject({
      layer: 'managed',
      location: { file: REQ, line: 2 },
    });
    expect(resolved.warnings).toEqual([
      `features.unified_exec = false in ${FILE}:2:1 is overridden: features.unified_exec = true in ${REQ}:2:1 pins unified_exec to true`,
      `--enable shell_zsh_fork is overridden: features.shell_zsh_fork = false in ${REQ}:3:1 pins shell_zsh_fork to false`,
    ]);
  });

  it('does not warn when a lower layer agrees with the pin', () => {
    const resolved = resolveFeatures({
      platform: 'linux',
      user: user('[features]\nunified_exec = true\n'),
      requirements: requirements('[features]\nunified_exec = true\n'),
    });
    expect(resolved.warnings).toEqual([]);
  });

  it.each([
    [
      { enable: ['unifed_exec'] },
      'unknown feature "unifed_exec" for --enable (did you mean "unified_exec"?)',
    ],
    [
      { disable: ['nothing_like_it'] },
      'unknown feature "nothing_like_it" for --disable; known features: shell_tool, unified_exec, shell_zsh_fork, unified_exec_zsh_fork, exec_permission_approvals, shell_snapshot, streamable_shell',
    ],
    [
      { enable: ['unified_exec'], disable: ['unified_exec'] },
      '--enable and --disable both name unified_exec',
    ],
  ])('rejects command-line flags %j', (cli, message) => {
    let caught: unknown;
    try {
      resolveFeatures({ platform: 'linux', cli });
    } catch (error) {
      caught = error;
    }
    expect(UxError.isInstance(caught) && caught.code).toBe('invalid_arguments');
    expect((caught as Error).message).toBe(message);
  });

  it('ignores a removed feature on the command line with a warning and maps legacy names', () => {
    const resolved = resolveFeatures({
      platform: 'linux',
      cli: { enable: ['streamable_shell'], disable: ['experimental_use_unified_exec_tool'] },
    });
    expect(resolved.flags.unified_exec).toBe(false);
    expect(resolved.warnings).toEqual([
      '--enable streamable_shell: feature "streamable_shell" was removed (superseded by unified_exec); ignored',
      '--disable experimental_use_unified_exec_tool: legacy name; use --disable unified_exec',
    ]);
  });

  it('rejects an unknown --profile, listing the defined ones', () => {
    expect(() =>
      resolveFeatures({ platform: 'linux', user: user('[profiles.work]\n'), profile: 'wrok' }),
    ).toThrow(`unknown profile "wrok" (did you mean "work"?); profiles defined in ${FILE}: work`);
    expect(() => resolveFeatures({ platform: 'linux', profile: 'work' })).toThrow(
      'unknown profile "work"; no config file defines profiles',
    );
  });
});

describe('resolveFeatures into the collapse', () => {
  it("gives the tool plan's reasons the requirement that pinned the deciding flag, and the profile behind another", () => {
    const resolved = resolveFeatures({
      platform: 'linux',
      user: user('profile = "work"\n[profiles.work.features]\nshell_zsh_fork = true\n'),
      requirements: requirements('[features]\nunified_exec_zsh_fork = false\n'),
    });
    const plan = planTools({ flags: resolved.flags, features: resolved.features, platform: 'linux' });
    expect(plan.mode).toBe('disabled');
    expect(plan.reasons[0]).toBe(
      `mode disabled: shell_tool is on (the default on linux); unified_exec is on (the default on linux); shell_zsh_fork is on (under development; profiles.work.features.shell_zsh_fork = true in ${FILE}:3:1); unified_exec_zsh_fork is off (under development; pinned by the requirements: features.unified_exec_zsh_fork = false in ${REQ}:2:1), so unified_exec and shell_zsh_fork do not compose: the zsh fork keeps its standalone shell tool`,
    );
  });
});
