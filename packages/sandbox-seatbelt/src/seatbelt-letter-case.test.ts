import type { EffectivePolicy, FileSystemEntry } from '@ux/protocol';
import { memoryFsView } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { type Decision, evaluateSbpl } from '../test/test-support.js';
import { checkSeatbeltProfile } from './check-seatbelt-profile.js';
import { parseSbpl } from './parse-sbpl.js';
import { planSeatbelt, type SeatbeltPlan } from './seatbelt-plan.js';

/*
 * macOS volumes are case-insensitive by default: `.GIT/config` is `.git/config`. These tests read the
 * generated profile with a small evaluator of the SBPL subset ux writes (the last matching rule wins,
 * as in Seatbelt; filters are matched against the path string as the process spelled it, parameters
 * substituted) and ask it about writes in other letter cases. It cannot say what the kernel does; it
 * says what the profile text means under that model, and it fails on the old, case-sensitive profile.
 */

const WRITES = ['file-write-create', 'file-write-data', 'file-write-unlink'] as const;

function writes(plan: Pick<SeatbeltPlan, 'profile' | 'parameters'>, path: string): Decision[] {
  return WRITES.map((operation) => evaluateSbpl(plan.profile, plan.parameters, { operation, path }));
}

const policy = (...more: FileSystemEntry[]): EffectivePolicy => ({
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ...more,
    ],
  },
  network: 'restricted',
});

function plan(files: Record<string, string>, cwd: string, effective = policy()): SeatbeltPlan {
  return planSeatbelt(
    {
      argv: ['/bin/sh', '-c', 'true'],
      cwd,
      env: { PATH: '/usr/bin:/bin', HOME: '/Users/me' },
      policy: effective,
      tty: false,
    },
    { fs: memoryFsView(files), hostEnv: {} },
  );
}

/** `.git/config` and `.git/hooks/` exist; `.codex` (and `.git/commondir`) do not. */
const WORKSPACE = {
  '/Users/me/w/.git/config': '[core]\n',
  '/Users/me/w/.git/HEAD': 'ref: refs/heads/main\n',
  '/Users/me/w/.git/hooks/': '',
  '/Users/me/w/.git/objects/': '',
  '/Users/me/w/src/': '',
};

describe('the Seatbelt profile in every letter case (evaluated, not run: no Mac here)', () => {
  const workspace = plan(WORKSPACE, '/Users/me/w');

  it('is a well-formed profile', () => {
    expect(checkSeatbeltProfile(workspace.profile, workspace.parameters)).toEqual([]);
  });

  it('denies writing, creating or deleting a protected path in any case, and anything below a protected directory', () => {
    for (const path of [
      '/Users/me/w/.GIT/config',
      '/Users/me/w/.git/CONFIG',
      '/Users/me/w/.git/config',
      '/Users/me/w/.git/HOOKS/x',
      '/Users/me/w/.Git/Hooks/pre-commit',
      '/Users/me/w/.git/hoo\u212As/pre-commit', // KELVIN SIGN: canonically K
      '/Users/me/w/.git/hooks',
      '/Users/me/w/.git/CommonDir',
      '/Users/me/w/.git/commondir',
      '/Users/me/w/.git/Config.Worktree',
    ]) {
      expect(writes(workspace, path), path).toEqual(['deny', 'deny', 'deny']);
    }
  });

  it('denies creating a missing protected path in any case, and anything below it (mkdir -p .CODEX/x)', () => {
    for (const path of [
      '/Users/me/w/.Codex',
      '/Users/me/w/.codex',
      '/Users/me/w/.CODEX/config.toml',
      '/Users/me/w/.CODEX/skills/x/SKILL.md',
      '/Users/me/w/.Agents',
      '/Users/me/w/.UX/x',
    ]) {
      expect(writes(workspace, path), path).toEqual(['deny', 'deny', 'deny']);
    }
  });

  it('still allows the rest of the workspace, .git included, whatever names look alike', () => {
    for (const path of [
      '/Users/me/w/.git/index',
      '/Users/me/w/.git/objects/ab/cd',
      '/Users/me/w/.git/COMMIT_EDITMSG',
      '/Users/me/w/.git/configs',
      '/Users/me/w/.git/hooks.old',
      '/Users/me/w/src/Git.ts',
      '/Users/me/w/src/.git/config',
      '/Users/me/w/.gitignore',
      '/Users/me/w/.codex-notes',
      '/Users/me/w/CODEX.md',
    ]) {
      expect(writes(workspace, path), path).toEqual(['allow', 'allow', 'allow']);
    }
  });

  it('denies renaming or replacing .git or the workspace in any case, but not a look-alike', () => {
    const rename = (path: string) =>
      evaluateSbpl(workspace.profile, workspace.parameters, { operation: 'file-write-unlink', path });
    const replace = (path: string) =>
      evaluateSbpl(workspace.profile, workspace.parameters, { operation: 'file-write-create', path });
    for (const path of ['/Users/me/w/.git', '/Users/me/w/.GIT', '/Users/me/w/.Git', '/Users/me/w']) {
      expect([rename(path), replace(path)], path).toEqual(['deny', 'deny']);
    }
    for (const path of ['/Users/me/w/.gitignore', '/Users/me/w/.git2', '/Users/me/w/src']) {
      expect([rename(path), replace(path)], path).toEqual(['allow', 'allow']);
    }
  });

  it('grants nothing outside the writable root, nor under another spelling of the root itself', () => {
    for (const path of ['/Users/me/other/x', '/Users/me/W/src/a.ts', '/Users/me/w2/x']) {
      expect(writes(workspace, path), path).toEqual(['deny', 'deny', 'deny']);
    }
  });

  it('catches the old case-sensitive exclusions, so the evaluator can fail', () => {
    // What the profile said before: the protected path as a parameter, matched with literal and subpath.
    const old = {
      profile: [
        '(version 1)',
        '(deny default)',
        '(allow file-write*',
        '  (require-all (subpath (param "WRITABLE_ROOT_0"))',
        '    (require-not (literal (param "EXCLUDED_0")))',
        '    (require-not (subpath (param "EXCLUDED_0")))))',
      ].join('\n'),
      parameters: [
        ['WRITABLE_ROOT_0', '/Users/me/w'],
        ['EXCLUDED_0', '/Users/me/w/.git/config'],
      ] as [string, string][],
    };
    expect(writes(old, '/Users/me/w/.git/config')).toEqual(['deny', 'deny', 'deny']);
    expect(writes(old, '/Users/me/w/.GIT/config')).toEqual(['allow', 'allow', 'allow']);
    expect(() =>
      evaluateSbpl('(version 1)\n(deny default)\n(allow file-write* (subpth "/x"))', [], {
        operation: 'file-write-data',
        path: '/x',
      }),
    ).toThrow(/does not know filter subpth/);
  });

  it('covers spellings that a nested writable root does not grant but the outer root does', () => {
    const nested = plan(
      {
        '/Users/me/w/.git/config': '',
        '/Users/me/w/sub/.git/config': '',
        '/Users/me/w/sub/.git/hooks/': '',
      },
      '/Users/me/w',
      policy({ path: { type: 'path', path: '/Users/me/w/sub' }, access: 'write' }),
    );
    expect(checkSeatbeltProfile(nested.profile, nested.parameters)).toEqual([]);
    for (const path of ['/Users/me/w/SUB/.GIT/config', '/Users/me/w/sub/.git/HOOKS/x']) {
      expect(writes(nested, path), path).toEqual(['deny', 'deny', 'deny']);
    }
    // `mv SUB/.GIT x` is granted by the outer root's rule; the guard must catch that spelling too.
    expect(
      evaluateSbpl(nested.profile, nested.parameters, {
        operation: 'file-write-unlink',
        path: '/Users/me/w/SUB/.GIT',
      }),
    ).toBe('deny');
    expect(writes(nested, '/Users/me/w/SUB/main.c')).toEqual(['allow', 'allow', 'allow']);
  });

  it('keeps read-only and deny-read entries of the policy unwritable in any case', () => {
    const entries = plan(
      { ...WORKSPACE, '/Users/me/w/docs/': '', '/Users/me/w/secrets/': '' },
      '/Users/me/w',
      policy(
        { path: { type: 'path', path: '/Users/me/w/docs' }, access: 'read' },
        { path: { type: 'path', path: '/Users/me/w/secrets' }, access: 'none' },
      ),
    );
    for (const path of ['/Users/me/w/DOCS/a.md', '/Users/me/w/Secrets', '/Users/me/w/SECRETS/key']) {
      expect(writes(entries, path), path).toEqual(['deny', 'deny', 'deny']);
    }
  });

  it('cannot be made to write SBPL by a hostile directory name', () => {
    const hostile = 'x") (allow default) ; ("';
    const files = (name: string) => ({
      ...WORKSPACE,
      [`/Users/me/w/.git/modules/${name}/config`]: '',
      [`/Users/me/w/.git/modules/${name}/hooks/`]: '',
    });
    const attacked = plan(files(hostile), '/Users/me/w');
    const benign = plan(files('lib'), '/Users/me/w');
    expect(checkSeatbeltProfile(attacked.profile, attacked.parameters)).toEqual([]);
    expect(parseSbpl(attacked.profile)).toHaveLength(parseSbpl(benign.profile).length);
    expect(attacked.profile).not.toContain('(allow default)');
    expect(writes(attacked, `/Users/me/w/.git/modules/${hostile.toUpperCase()}/HOOKS/post-checkout`)).toEqual(
      ['deny', 'deny', 'deny'],
    );
    expect(writes(attacked, '/Users/me/other')).toEqual(['deny', 'deny', 'deny']);
  });
});
