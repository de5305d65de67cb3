import type { FileSystemPolicy } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { resolveEntries } from './resolve-entries.js';

describe('resolveEntries', () => {
  const context = {
    cwd: '/home/dev/proj',
    homeDir: '/home/dev',
    tmpdir: '/var/tmp/x',
    projectRoots: ['/home/dev/proj', '/home/dev/lib'],
  };
  const policy: FileSystemPolicy = {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd', subpath: '.git' }, access: 'read' },
      { path: { type: 'special', value: 'project_roots' }, access: 'write' },
      { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
      { path: { type: 'special', value: 'minimal' }, access: 'read' },
      { path: { type: 'path', path: '~/.ssh' }, access: 'none' },
      { path: { type: 'path', path: 'build' }, access: 'write' },
      { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
    ],
  };

  it('makes every location concrete for the run, with its depth', () => {
    const targets = resolveEntries(policy, context).map(({ access, target, specificity }) => ({
      access,
      at: target.kind === 'path' ? target.path : target.pattern,
      specificity,
    }));
    expect(targets).toEqual([
      { access: 'read', at: '/', specificity: 0 },
      { access: 'read', at: '/home/dev/proj/.git', specificity: 4 },
      { access: 'write', at: '/home/dev/proj', specificity: 3 },
      { access: 'write', at: '/home/dev/lib', specificity: 3 },
      { access: 'write', at: '/var/tmp/x', specificity: 3 },
      // `minimal` is what the backend passes as minimalRoots: nothing here.
      { access: 'none', at: '/home/dev/.ssh', specificity: 3 },
      { access: 'write', at: '/home/dev/proj/build', specificity: 4 },
      { access: 'none', at: '/home/dev/proj/**/*.env', specificity: 5 },
    ]);
  });

  it('compiles globs anchored at the cwd', () => {
    const glob = resolveEntries(policy, context).find((entry) => entry.target.kind === 'glob');
    const regexp = glob?.target.kind === 'glob' ? glob.target.regexp : undefined;
    expect(regexp?.test('/home/dev/proj/a/b/prod.env')).toBe(true);
    expect(regexp?.test('/home/dev/other/prod.env')).toBe(false);
  });

  it('has no entries for an unrestricted or external policy', () => {
    expect(resolveEntries({ kind: 'unrestricted' }, context)).toEqual([]);
    expect(resolveEntries({ kind: 'external-sandbox' }, context)).toEqual([]);
  });

  it('resolves Windows paths in their own flavour and matches them without regard to case', () => {
    const windows: FileSystemPolicy = {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        { path: { type: 'glob', pattern: '**\\*.pem' }, access: 'none' },
      ],
    };
    const [cwd, pem] = resolveEntries(windows, { cwd: 'C:\\Users\\Dev\\Proj', pathStyle: 'win32' });
    expect(cwd?.target).toEqual({ kind: 'path', path: 'C:\\Users\\Dev\\Proj' });
    expect(cwd?.specificity).toBe(3);
    const regexp = pem?.target.kind === 'glob' ? pem.target.regexp : undefined;
    expect(regexp?.test('c:/users/dev/proj/keys/k.pem')).toBe(true);
  });
});
