import { describe, expect, it } from 'vitest';
import { memoryFsView } from './fs-view.js';
import { protectedPaths } from './protected-paths.js';
import { canonicalize, resolveSandboxLayout } from './sandbox-layout.js';

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
      'missing /w/.git/info/attributes',
      'file /w/.git/modules/lib/config',
      'missing /w/.git/modules/lib/config.worktree',
      'dir /w/.git/modules/lib/hooks',
      'missing /w/.git/modules/lib/info/attributes',
      'file /w/.git/worktrees/feature/commondir',
      'file /w/.git/worktrees/feature/gitdir',
      'missing /w/.git/worktrees/feature/config.worktree',
      'missing /w/.ux',
      'dir /w/.codex',
      'missing /w/.agents',
    ]);
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
      'missing /main/.git/info/attributes',
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
    const fs = memoryFsView({ '/home/u/.bashrc': '', '/home/u/.ssh/authorized_keys': '', '/home/u/.git/config': '' });
    const paths = summary(protectedPaths('/home/u', fs, { homeDir: '/home/u', metadataDirs: [] })).filter(
      (line) => !line.includes('/.git/'),
    );
    expect(paths).toEqual([
      'file /home/u/.bashrc',
      'missing /home/u/.bash_profile',
      'missing /home/u/.profile',
      'missing /home/u/.zshrc',
      'missing /home/u/.zshenv',
      'dir /home/u/.ssh',
    ]);
    expect(summary(protectedPaths('/home/u/project', fs, { homeDir: '/home/u', metadataDirs: [] }))).toEqual([
      'missing /home/u/project/.git',
    ]);
  });
});

describe('resolveSandboxLayout', () => {
  it('gives workspace-write its writable roots with carve-outs, read everywhere, and masks', () => {
    const fs = memoryFsView({ '/w/.git/config': '', '/w/.git/hooks/': '', '/tmp/': '', '/w/secrets/': '', '/w/docs/': '' });
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
      '/w/.git/info/attributes',
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
        fileSystem: { kind: 'restricted', entries: [{ path: { type: 'special', value: 'minimal' }, access: 'read' }] },
        network: 'enabled',
      },
      { cwd: '/w', minimalRoots: ['/usr', '/lib-missing'] },
      fs,
    );
    expect(restricted.readAll).toBe(false);
    expect(restricted.readableRoots).toEqual(['/usr']);
    expect(resolveSandboxLayout({ fileSystem: { kind: 'unrestricted' }, network: 'enabled' }, { cwd: '/w' }, fs)).toMatchObject({
      readAll: true,
      writableRoots: [],
    });
  });

  it('canonicalises through symlinks and keeps a missing tail', () => {
    const fs = memoryFsView({ '/link': '-> /real', '/real/': '' });
    expect(canonicalize('/link/a/b', fs)).toBe('/real/a/b');
  });
});
