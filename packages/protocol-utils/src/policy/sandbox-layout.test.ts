import { describe, expect, it } from 'vitest';
import { type FsView, memoryFsView } from './fs-view.js';
import { gitdirTarget, protectedPaths } from './protected-paths.js';
import { canonicalize, isUnder, protectedEntryFor, resolveSandboxLayout } from './sandbox-layout.js';

const repo = memoryFsView({
  '/w/.git/config': '[core]',
  '/w/.git/hooks/': '',
  '/w/.git/objects/': '',
  '/w/.git/HEAD': 'ref: refs/heads/main',
  '/w/.git/modules/lib/config': '',
  '/w/.git/modules/lib/hooks/': '',
  '/w/.git/worktrees/feature/commondir': '../..',
  '/w/.git/worktrees/feature/gitdir': '/elsewhere/feature/.git',
  '/w/.codex/': '',
  '/w/src/main.ts': '',
});

const summary = (paths: ReturnType<typeof protectedPaths>) => paths.map((p) => `${p.kind} ${p.path}`);

describe('protectedPaths', () => {
  it('keeps git configuration and hooks read-only, not objects, refs or the index', () => {
    expect(summary(protectedPaths('/w', repo))).toEqual([
      'file /w/.git/config',
      'missing /w/.git/config.worktree',
      'dir /w/.git/hooks',
      'missing /w/.git/commondir',
      'file /w/.git/modules/lib/config',
      'missing /w/.git/modules/lib/config.worktree',
      'dir /w/.git/modules/lib/hooks',
      'missing /w/.git/modules/lib/commondir',
      'file /w/.git/worktrees/feature/commondir',
      'file /w/.git/worktrees/feature/gitdir',
      'missing /w/.git/worktrees/feature/config.worktree',
      'missing /w/.ux',
      'dir /w/.codex',
      'missing /w/.agents',
    ]);
  });

  it('protects info/attributes when it exists, and does not guard it when missing', () => {
    const withAttributes = memoryFsView({ '/w/.git/config': '', '/w/.git/info/attributes': '* diff' });
    expect(summary(protectedPaths('/w', withAttributes, { metadataDirs: [] }))).toContain(
      'file /w/.git/info/attributes',
    );
    const without = memoryFsView({ '/w/.git/config': '', '/w/.git/info/exclude': '' });
    expect(summary(protectedPaths('/w', without, { metadataDirs: [] })).join('\n')).not.toContain(
      'attributes',
    );
  });

  it('finds submodules whose names have slashes, and submodules of submodules', () => {
    const fs = memoryFsView({
      '/w/.git/config': '',
      '/w/.git/hooks/': '',
      '/w/.git/modules/libs/json/HEAD': 'ref: refs/heads/main',
      '/w/.git/modules/libs/json/hooks/': '',
      '/w/.git/modules/libs/json/modules/inner/config': '',
    });
    const found = summary(protectedPaths('/w', fs));
    expect(found).toContain('dir /w/.git/modules/libs/json/hooks');
    expect(found).toContain('missing /w/.git/modules/libs/json/config');
    expect(found).toContain('file /w/.git/modules/libs/json/modules/inner/config');
    expect(found).not.toContain('missing /w/.git/modules/libs/config');
  });

  it('protects a gitdir pointer file and the repository it points to', () => {
    const fs = memoryFsView({
      '/wt/.git': 'gitdir: ../main/.git/worktrees/wt\n',
      '/main/.git/worktrees/wt/commondir': '../..\n',
      '/main/.git/worktrees/wt/gitdir': '/wt/.git',
      '/main/.git/config': '',
      '/main/.git/hooks/': '',
    });
    const paths = summary(protectedPaths('/wt', fs, { metadataDirs: [] }));
    expect(paths).toEqual([
      'file /wt/.git',
      'file /main/.git/worktrees/wt/commondir',
      'file /main/.git/worktrees/wt/gitdir',
      'missing /main/.git/worktrees/wt/config.worktree',
      'file /main/.git/config',
      'missing /main/.git/config.worktree',
      'dir /main/.git/hooks',
      'missing /main/.git/commondir',
    ]);
  });

  it('blocks creating .git where there is none, and protects a symlinked .git as the link', () => {
    expect(summary(protectedPaths('/empty', memoryFsView({ '/empty/': '' }), { metadataDirs: [] }))).toEqual([
      'missing /empty/.git',
    ]);
    const linked = memoryFsView({ '/l/.git': '-> /real/.git', '/real/.git/config': '' });
    expect(summary(protectedPaths('/l', linked, { metadataDirs: [] }))).toEqual(['symlink /l/.git']);
  });

  it('protects start-up and config files when the home directory is inside the root', () => {
    const fs = memoryFsView({
      '/home/u/.bashrc': '',
      '/home/u/.ssh/authorized_keys': '',
      '/home/u/.git/config': '',
      '/home/u/.config/': '',
      '/home/u/.local/share/': '',
      '/home/u/.cargo/bin/': '',
      '/home/u/tools/bin/': '',
    });
    const lines = summary(
      protectedPaths('/home/u', fs, {
        homeDir: '/home/u',
        metadataDirs: [],
        pathDirectories: ['/home/u/tools/bin', '/usr/bin', 'relative/bin'],
      }),
    ).filter((line) => !line.includes('/.git/'));
    // Existing names are read-only; missing ones are guarded, also below directories that do not
    // exist yet (.gradle, .m2, .config/pip's .config here exists).
    expect(lines).toEqual(
      expect.arrayContaining([
        'file /home/u/.bashrc',
        'missing /home/u/.bash_profile',
        'missing /home/u/.bash_aliases',
        'missing /home/u/.profile',
        'missing /home/u/.zshenv',
        'missing /home/u/.gitconfig',
        'missing /home/u/.config/git',
        'missing /home/u/.config/fish',
        'missing /home/u/.config/systemd',
        'missing /home/u/.config/autostart',
        'missing /home/u/.local/bin',
        'missing /home/u/bin',
        'missing /home/u/.npmrc',
        'missing /home/u/.vimrc',
        'missing /home/u/.gradle/init.d',
        'missing /home/u/.m2/settings.xml',
        'missing /home/u/.local/share/systemd',
        'dir /home/u/.ssh',
        'dir /home/u/.cargo/bin',
        'dir /home/u/tools/bin',
      ]),
    );
    // Not guarded: the tool homes installers create (also below a missing directory), and PATH
    // directories outside the home.
    expect(lines).not.toContain('missing /home/u/.nvm');
    expect(lines).not.toContain('missing /home/u/.cargo/env');
    expect(lines.some((line) => line.includes('/usr/bin') || line.includes('relative'))).toBe(false);
    expect(summary(protectedPaths('/home/u/project', fs, { homeDir: '/home/u', metadataDirs: [] }))).toEqual([
      'missing /home/u/project/.git',
    ]);
  });

  it('protects what a protected link, or a link on the way to a protected name, leads to inside the root', () => {
    const fs = memoryFsView({
      '/h/.bashrc': '-> dotfiles/bashrc',
      '/h/dotfiles/bashrc': '# mine',
      '/h/.config': '-> dotfiles/config',
      '/h/dotfiles/config/nvim/': '',
      '/h/.gitconfig': '-> /elsewhere/gitconfig',
      '/elsewhere/gitconfig': '',
    });
    const lines = summary(protectedPaths('/h', fs, { homeDir: '/h', metadataDirs: [] }));
    expect(lines).toEqual(
      expect.arrayContaining([
        'symlink /h/.bashrc',
        'file /h/dotfiles/bashrc',
        'dir /h/.config/nvim',
        'dir /h/dotfiles/config/nvim',
        'missing /h/.config/git',
        'missing /h/dotfiles/config/git',
        'symlink /h/.gitconfig',
      ]),
    );
    // What a link leads to outside the root is not this root's to protect.
    expect(lines.some((line) => line.includes('/elsewhere'))).toBe(false);
    // The door's writers compare canonical paths: those are protected too.
    const layout = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [{ path: { type: 'special', value: 'cwd' }, access: 'write' }],
        },
        network: 'restricted',
      },
      { cwd: '/h' },
      fs,
      { homeDir: '/h' },
    );
    expect(protectedEntryFor(layout, '/h/dotfiles/bashrc')?.why).toMatch(/start-up file/);
    expect(protectedEntryFor(layout, '/h/dotfiles/config/git/config')?.why).toMatch(/git configuration/);
    expect(protectedEntryFor(layout, '/h/dotfiles/other')).toBeUndefined();
  });

  it('protects the git surface of repositories found at the start inside the root, not a missing one', () => {
    const fs = memoryFsView({
      '/w/.git/config': '',
      '/w/vendor/lib/.git/config': '',
      '/w/vendor/lib/.git/hooks/': '',
      '/w/sub/.git': 'gitdir: ../.git/modules/sub',
      '/w/.git/modules/sub/config': '',
      '/w/gone/': '',
      '/elsewhere/.git/config': '',
    });
    const lines = summary(
      protectedPaths('/w', fs, {
        metadataDirs: [],
        repositories: ['/w/vendor/lib', '/w/sub', '/w/gone', '/elsewhere', '/w'],
      }),
    );
    expect(lines).toEqual(
      expect.arrayContaining([
        'file /w/vendor/lib/.git/config',
        'dir /w/vendor/lib/.git/hooks',
        'missing /w/vendor/lib/.git/commondir',
        'file /w/sub/.git',
        'file /w/.git/modules/sub/config',
      ]),
    );
    expect(lines.some((line) => line.includes('/w/gone'))).toBe(false);
    expect(lines.some((line) => line.includes('/elsewhere'))).toBe(false);
  });
});

describe('resolveSandboxLayout', () => {
  it('with rootsOnly gives the same roots and nothing of what is protected inside them', () => {
    const fs = memoryFsView({ '/w/.git/config': '', '/w/.git/hooks/': '', '/tmp/': '', '/w/docs/': '' });
    const policy = {
      fileSystem: {
        kind: 'restricted' as const,
        entries: [
          { path: { type: 'special' as const, value: 'root' as const }, access: 'read' as const },
          { path: { type: 'special' as const, value: 'cwd' as const }, access: 'write' as const },
          { path: { type: 'special' as const, value: 'slash_tmp' as const }, access: 'write' as const },
          { path: { type: 'path' as const, path: '/w/docs' }, access: 'read' as const },
        ],
      },
      network: 'restricted' as const,
      hostState: { readOnly: ['/w/.ux'] },
    };
    const full = resolveSandboxLayout(policy, { cwd: '/w' }, fs);
    const roots = resolveSandboxLayout(policy, { cwd: '/w' }, fs, { rootsOnly: true });
    expect(roots.writableRoots.map((root) => root.root)).toEqual(full.writableRoots.map((root) => root.root));
    expect(full.writableRoots.some((root) => root.readOnly.length > 0)).toBe(true);
    expect(roots.writableRoots.every((root) => root.readOnly.length === 0)).toBe(true);
  });

  it('gives workspace-write its writable roots with carve-outs, read everywhere, and masks', () => {
    const fs = memoryFsView({
      '/w/.git/config': '',
      '/w/.git/hooks/': '',
      '/tmp/': '',
      '/w/secrets/': '',
      '/w/docs/': '',
    });
    const layout = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
            { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
            { path: { type: 'path', path: '/w/docs' }, access: 'read' },
            { path: { type: 'path', path: '/w/secrets' }, access: 'none' },
            { path: { type: 'path', path: '/missing' }, access: 'write' },
            { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
          ],
        },
        network: 'restricted',
      },
      { cwd: '/w' },
      fs,
      { metadataDirs: [] },
    );
    expect(layout.readAll).toBe(true);
    expect(layout.writableRoots.map((root) => root.root)).toEqual(['/tmp', '/w']);
    expect(layout.writableRoots[1]!.readOnly.map((p) => p.path)).toEqual([
      '/w/.git/config',
      '/w/.git/config.worktree',
      '/w/.git/hooks',
      '/w/.git/commondir',
      '/w/docs',
    ]);
    expect(layout.missingWritableRoots).toEqual(['/missing']);
    expect(layout.unreadable).toEqual(['/w/secrets']);
    expect(layout.unreadableGlobs).toEqual(['/w/**/*.env']);
    expect(layout.network).toBe('restricted');
  });

  it('lists readable roots when reads are restricted, and nothing for unrestricted policies', () => {
    const fs = memoryFsView({ '/usr/': '', '/w/': '' });
    const restricted = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [{ path: { type: 'special', value: 'minimal' }, access: 'read' }],
        },
        network: 'enabled',
      },
      { cwd: '/w', minimalRoots: ['/usr', '/lib-missing'] },
      fs,
    );
    expect(restricted.readAll).toBe(false);
    expect(restricted.readableRoots).toEqual(['/usr']);
    expect(
      resolveSandboxLayout({ fileSystem: { kind: 'unrestricted' }, network: 'enabled' }, { cwd: '/w' }, fs),
    ).toMatchObject({
      readAll: true,
      writableRoots: [],
    });
  });

  it('canonicalises through symlinks and keeps a missing tail', () => {
    const fs = memoryFsView({ '/link': '-> /real', '/real/': '' });
    expect(canonicalize('/link/a/b', fs)).toBe('/real/a/b');
  });
});

/** A Windows-flavoured in-memory FsView: case-insensitive, `\` separators, trailing `\` marks directories. */
function win32Fs(entries: Record<string, string>): FsView {
  const kinds = new Map<string, { path: string; kind: 'file' | 'dir'; content: string }>();
  const key = (path: string) => path.replace(/[\\/]+$/, '').toLowerCase();
  const addDir = (path: string) => {
    for (let dir = path; ; dir = dir.slice(0, dir.lastIndexOf('\\'))) {
      if (!kinds.has(key(dir))) kinds.set(key(dir), { path: dir, kind: 'dir', content: '' });
      if (!dir.includes('\\', 3)) break;
    }
  };
  for (const [path, content] of Object.entries(entries)) {
    if (path.endsWith('\\')) addDir(path.slice(0, -1));
    else {
      addDir(path.slice(0, path.lastIndexOf('\\')));
      kinds.set(key(path), { path, kind: 'file', content });
    }
  }
  return {
    kind: (path) => kinds.get(key(path))?.kind,
    readFile: (path) => kinds.get(key(path))?.content,
    readdir: (path) =>
      [...kinds.values()]
        .filter((entry) => key(entry.path).startsWith(`${key(path)}\\`))
        .map((entry) => entry.path.slice(path.length + 1).split('\\')[0]!)
        .filter((name, index, all) => all.indexOf(name) === index)
        .sort(),
    realpath: (path) => kinds.get(key(path))?.path,
  };
}

describe('Windows paths (pathStyle: win32)', () => {
  const fs = win32Fs({
    'C:\\Work\\App\\.git\\config': '',
    'C:\\Work\\App\\.git\\hooks\\': '',
    'C:\\Work\\App\\.git\\modules\\lib\\config': '',
    'C:\\Work\\App\\.codex\\': '',
    'C:\\Work\\App\\docs\\': '',
    'C:\\Work\\Wt\\.git': 'gitdir: C:/Work/App/.git/worktrees/wt\n',
    'C:\\Work\\App\\.git\\worktrees\\wt\\commondir': '../..\n',
    'C:\\Work\\App\\.git\\worktrees\\wt\\gitdir': 'C:/Work/Wt/.git',
    'C:\\Users\\Me\\AppData\\Local\\Temp\\': '',
    '\\\\server\\share\\repo\\.git\\config': '',
  });

  it('protects git config, hooks, submodules and metadata with backslash paths', () => {
    expect(summary(protectedPaths('C:\\Work\\App', fs, { pathStyle: 'win32' }))).toEqual([
      'file C:\\Work\\App\\.git\\config',
      'missing C:\\Work\\App\\.git\\config.worktree',
      'dir C:\\Work\\App\\.git\\hooks',
      'missing C:\\Work\\App\\.git\\commondir',
      'file C:\\Work\\App\\.git\\modules\\lib\\config',
      'missing C:\\Work\\App\\.git\\modules\\lib\\config.worktree',
      'missing C:\\Work\\App\\.git\\modules\\lib\\hooks',
      'missing C:\\Work\\App\\.git\\modules\\lib\\commondir',
      'file C:\\Work\\App\\.git\\worktrees\\wt\\commondir',
      'file C:\\Work\\App\\.git\\worktrees\\wt\\gitdir',
      'missing C:\\Work\\App\\.git\\worktrees\\wt\\config.worktree',
      'missing C:\\Work\\App\\.ux',
      'dir C:\\Work\\App\\.codex',
      'missing C:\\Work\\App\\.agents',
    ]);
  });

  it('follows a forward-slash gitdir pointer to the linked worktree and its repository', () => {
    expect(summary(protectedPaths('C:\\Work\\Wt', fs, { pathStyle: 'win32', metadataDirs: [] }))).toEqual([
      'file C:\\Work\\Wt\\.git',
      'file C:\\Work\\App\\.git\\worktrees\\wt\\commondir',
      'file C:\\Work\\App\\.git\\worktrees\\wt\\gitdir',
      'missing C:\\Work\\App\\.git\\worktrees\\wt\\config.worktree',
      'file C:\\Work\\App\\.git\\config',
      'missing C:\\Work\\App\\.git\\config.worktree',
      'dir C:\\Work\\App\\.git\\hooks',
      'missing C:\\Work\\App\\.git\\commondir',
      'file C:\\Work\\App\\.git\\modules\\lib\\config',
      'missing C:\\Work\\App\\.git\\modules\\lib\\config.worktree',
      'missing C:\\Work\\App\\.git\\modules\\lib\\hooks',
      'missing C:\\Work\\App\\.git\\modules\\lib\\commondir',
    ]);
    expect(gitdirTarget('C:\\Work\\Wt\\.git', fs, 'win32')).toBe('C:\\Work\\App\\.git\\worktrees\\wt');
  });

  it('treats the home directory as inside a root regardless of case', () => {
    const home = win32Fs({ 'C:\\Users\\Me\\.bashrc': '', 'C:\\Users\\Me\\.ssh\\config': '' });
    const paths = summary(
      protectedPaths('c:\\users', home, { pathStyle: 'win32', homeDir: 'C:\\Users\\Me', metadataDirs: [] }),
    );
    expect(paths).toContain('file C:\\Users\\Me\\.bashrc');
    expect(paths).toContain('dir C:\\Users\\Me\\.ssh');
    expect(
      summary(protectedPaths('C:\\Users\\Other', home, { pathStyle: 'win32', homeDir: 'C:\\Users\\Me' })),
    ).not.toContain('file C:\\Users\\Me\\.bashrc');
  });

  it('resolves a workspace-write layout: drive root reads all, canonical roots, carve-outs, masks', () => {
    const layout = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
            { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
            { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
            { path: { type: 'path', path: 'docs' }, access: 'read' },
            { path: { type: 'path', path: 'D:\\missing' }, access: 'write' },
            { path: { type: 'path', path: '\\\\server\\share\\repo' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
      { cwd: 'c:\\work\\app', tmpdir: 'C:\\Users\\Me\\AppData\\Local\\Temp', pathStyle: 'win32' },
      fs,
      { metadataDirs: [] },
    );
    expect(layout.readAll).toBe(true);
    expect(layout.writableRoots.map((root) => root.root)).toEqual([
      'C:\\Work\\App',
      '\\\\server\\share\\repo',
      'C:\\Users\\Me\\AppData\\Local\\Temp',
    ]);
    expect(layout.writableRoots[0]!.readOnly.map((p) => p.path)).toEqual([
      'C:\\Work\\App\\.git\\config',
      'C:\\Work\\App\\.git\\config.worktree',
      'C:\\Work\\App\\.git\\hooks',
      'C:\\Work\\App\\.git\\commondir',
      'C:\\Work\\App\\.git\\modules\\lib\\config',
      'C:\\Work\\App\\.git\\modules\\lib\\config.worktree',
      'C:\\Work\\App\\.git\\modules\\lib\\hooks',
      'C:\\Work\\App\\.git\\modules\\lib\\commondir',
      'C:\\Work\\App\\.git\\worktrees\\wt\\commondir',
      'C:\\Work\\App\\.git\\worktrees\\wt\\gitdir',
      'C:\\Work\\App\\.git\\worktrees\\wt\\config.worktree',
      'c:\\work\\app\\docs',
    ]);
    expect(layout.writableRoots[1]!.readOnly.map((p) => p.path)).toEqual([
      '\\\\server\\share\\repo\\.git\\config',
      '\\\\server\\share\\repo\\.git\\config.worktree',
      '\\\\server\\share\\repo\\.git\\hooks',
      '\\\\server\\share\\repo\\.git\\commondir',
    ]);
    expect(layout.missingWritableRoots).toEqual(['D:\\missing']);
  });

  it('compares and canonicalises Windows paths case-insensitively, POSIX paths exactly', () => {
    expect(isUnder('C:\\Work\\App\\src', 'c:\\work\\app', 'win32')).toBe(true);
    expect(isUnder('C:\\Work\\Apple', 'C:\\Work\\App', 'win32')).toBe(false);
    expect(isUnder('D:\\x', 'C:\\', 'win32')).toBe(false);
    expect(isUnder('C:\\x', 'C:\\', 'win32')).toBe(true);
    expect(isUnder('/Work/App/src', '/work/app')).toBe(false);
    expect(canonicalize('c:\\work\\app\\new\\file.txt', fs, 'win32')).toBe('C:\\Work\\App\\new\\file.txt');
  });
});

describe('protectedEntryFor (the one predicate)', () => {
  const workspaceWrite = (extra: { type: 'path'; path: string }[] = []) => ({
    fileSystem: {
      kind: 'restricted' as const,
      entries: [
        { path: { type: 'special' as const, value: 'root' as const }, access: 'read' as const },
        { path: { type: 'special' as const, value: 'cwd' as const }, access: 'write' as const },
        { path: { type: 'special' as const, value: 'slash_tmp' as const }, access: 'write' as const },
        ...extra.map((path) => ({ path, access: 'write' as const })),
      ],
    },
    network: 'restricted' as const,
  });
  const nested = memoryFsView({
    '/tmp/ws/.git/config': '',
    '/tmp/ws/.git/hooks/pre-commit.sample': '',
    '/tmp/ws/src/': '',
    '/parent/ws/.git/config': '',
  });

  it('protects a workspace’s own names when the workspace lies inside another writable root', () => {
    const layout = resolveSandboxLayout(workspaceWrite(), { cwd: '/tmp/ws' }, nested);
    // Two roots hold /tmp/ws/.git/config: /tmp (outermost, which has no such entry) and /tmp/ws.
    expect(layout.writableRoots.map((root) => root.root)).toEqual(['/tmp', '/tmp/ws']);
    for (const path of [
      '/tmp/ws/.git/config',
      '/tmp/ws/.git/hooks/pre-commit',
      '/tmp/ws/.git/commondir',
      '/tmp/ws/.ux/config.toml',
      '/tmp/ws/.codex',
    ])
      expect(protectedEntryFor(layout, path)?.path, path).toBeDefined();
    expect(protectedEntryFor(layout, '/tmp/ws/src/main.ts')).toBeUndefined();
    expect(protectedEntryFor(layout, '/tmp/other.txt')).toBeUndefined();
  });

  it('does the same inside $TMPDIR (a tmpdir entry), for every protected name', () => {
    const fs = memoryFsView({ '/var/t/ws/.git/config': '', '/var/t/ws/.git/hooks/': '' });
    const layout = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
            { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
      { cwd: '/var/t/ws', tmpdir: '/var/t' },
      fs,
    );
    expect(layout.writableRoots.map((root) => root.root)).toEqual(['/var/t', '/var/t/ws']);
    for (const name of [
      '.git/config',
      '.git/config.worktree',
      '.git/hooks/pre-commit',
      '.git/commondir',
      '.ux/x',
      '.codex/config.toml',
      '.agents/s.md',
    ])
      expect(protectedEntryFor(layout, `/var/t/ws/${name}`), name).toBeDefined();
  });

  it('does the same under a --writable-root parent', () => {
    const layout = resolveSandboxLayout(
      workspaceWrite([{ type: 'path', path: '/parent' }]),
      { cwd: '/parent/ws' },
      nested,
    );
    expect(protectedEntryFor(layout, '/parent/ws/.git/config')?.why).toMatch(/git configuration/);
  });

  it('counts ux’s hidden directories as protected wherever they lie', () => {
    const fs = memoryFsView({ '/w/': '', '/run/ux/x/': '' });
    const layout = resolveSandboxLayout(
      { ...workspaceWrite(), hostState: { hidden: ['/run/ux', '/missing'] } },
      { cwd: '/w' },
      fs,
    );
    expect(layout.hidden).toEqual(['/run/ux']);
    expect(protectedEntryFor(layout, '/run/ux/x/sock')?.why).toMatch(/runtime/);
  });
});

describe('resolveSandboxLayout: ux’s own state and a private /tmp', () => {
  const policy = {
    fileSystem: {
      kind: 'restricted' as const,
      entries: [
        { path: { type: 'special' as const, value: 'root' as const }, access: 'read' as const },
        { path: { type: 'special' as const, value: 'cwd' as const }, access: 'write' as const },
        { path: { type: 'special' as const, value: 'slash_tmp' as const }, access: 'write' as const },
        { path: { type: 'special' as const, value: 'tmpdir' as const }, access: 'write' as const },
      ],
    },
    network: 'restricted' as const,
  };
  const fs = memoryFsView({ '/tmp/uxhome/rules/': '', '/tmp/ws/': '', '/var/t/': '' });

  it('keeps UX_HOME and a missing requirements file read-only inside a writable root', () => {
    const layout = resolveSandboxLayout(
      { ...policy, hostState: { readOnly: ['/tmp/uxhome', '/tmp/req.toml', '/etc/ux/requirements.toml'] } },
      { cwd: '/tmp/ws', tmpdir: '/var/t' },
      fs,
    );
    const tmp = layout.writableRoots.find((root) => root.root === '/tmp')!;
    expect(
      tmp.readOnly.filter((entry) => /ux's own state/.test(entry.why)).map((e) => `${e.kind} ${e.path}`),
    ).toEqual(['dir /tmp/uxhome', 'missing /tmp/req.toml']);
    expect(protectedEntryFor(layout, '/tmp/uxhome/rules/evil.rules')).toBeDefined();
    expect(layout.privateTmp).toBe(false);
  });

  it('drops the host’s /tmp and $TMPDIR from the writable roots when /tmp is private', () => {
    const layout = resolveSandboxLayout(
      { ...policy, privateTmp: true },
      { cwd: '/tmp/ws', tmpdir: '/var/t' },
      fs,
    );
    expect(layout.privateTmp).toBe(true);
    // The workspace stays writable though it lies in /tmp.
    expect(layout.writableRoots.map((root) => root.root)).toEqual(['/tmp/ws']);
  });

  it('has nothing to replace when the policy grants no /tmp', () => {
    const layout = resolveSandboxLayout(
      {
        ...policy,
        fileSystem: { ...policy.fileSystem, entries: policy.fileSystem.entries.slice(0, 2) },
        privateTmp: true,
      },
      { cwd: '/tmp/ws' },
      fs,
    );
    expect(layout.privateTmp).toBe(false);
  });
});

describe('protectedEntryFor: the most specific policy entry wins over a policy read entry', () => {
  it('keeps a writable entry inside a read entry writable, and a protected name inside it protected', () => {
    const fs = memoryFsView({ '/p/docs/drafts/.git/config': '', '/p/docs/x.md': '' });
    const layout = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'path', path: '/p' }, access: 'write' },
            { path: { type: 'path', path: '/p/docs' }, access: 'read' },
            { path: { type: 'path', path: '/p/docs/drafts' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
      { cwd: '/p' },
      fs,
    );
    expect(protectedEntryFor(layout, '/p/docs/x.md')?.why).toBe('read-only entry of the policy');
    expect(protectedEntryFor(layout, '/p/docs/drafts/new.md')).toBeUndefined();
    expect(protectedEntryFor(layout, '/p/docs/drafts/.git/config')?.why).toMatch(/git configuration/);
  });
});

describe('protectedPaths: a .git above the workspace', () => {
  it('guards a missing .git in every directory between the writable root and the workspace', () => {
    const fs = memoryFsView({ '/p/a/ws/src/': '', '/p/b/': '' });
    const layout = resolveSandboxLayout(
      {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
            { path: { type: 'path', path: '/p' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
      { cwd: '/p/a/ws' },
      fs,
    );
    for (const path of ['/p/.git/config', '/p/a/.git', '/p/a/.git/HEAD', '/p/a/ws/.git/hooks/x'])
      expect(protectedEntryFor(layout, path)?.path, path).toBeDefined();
    expect(protectedEntryFor(layout, '/p/b/.git')).toBeUndefined();
  });
});
