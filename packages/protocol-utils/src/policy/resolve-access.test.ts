import type { FileSystemPolicy } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { resolveAccess } from './resolve-access.js';

describe('resolveAccess', () => {
  const context = { cwd: '/home/dev/proj', homeDir: '/home/dev', tmpdir: '/var/tmp/x' };
  const policy: FileSystemPolicy = {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
      { path: { type: 'special', value: 'cwd', subpath: '.git' }, access: 'read' },
      { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
      { path: { type: 'path', path: '~/.ssh' }, access: 'none' },
      { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
    ],
  };

  it.each([
    ['/etc/passwd', 'read'],
    ['/home/dev/proj/src/a.ts', 'write'],
    ['/home/dev/proj', 'write'],
    ['/home/dev/project-other/x', 'read'],
    ['/home/dev/proj/.git/config', 'read'],
    ['/home/dev/proj/.env', 'none'],
    ['/home/dev/proj/deep/er/prod.env', 'none'],
    ['/home/dev/proj/prod.env.example', 'write'],
    ['/home/dev/.ssh/id_ed25519', 'none'],
    ['/var/tmp/x/build.o', 'write'],
    ['src/main.ts', 'write'],
  ])('%s → %s', (path, expected) => {
    expect(resolveAccess(policy, path, context)).toBe(expected);
  });

  it('lets none beat write and write beat read at equal depth', () => {
    const tie: FileSystemPolicy = {
      kind: 'restricted',
      entries: [
        { path: { type: 'path', path: '/a' }, access: 'read' },
        { path: { type: 'path', path: '/a' }, access: 'write' },
        { path: { type: 'path', path: '/b' }, access: 'write' },
        { path: { type: 'path', path: '/b' }, access: 'none' },
      ],
    };
    expect(resolveAccess(tie, '/a/x', { cwd: '/' })).toBe('write');
    expect(resolveAccess(tie, '/b/x', { cwd: '/' })).toBe('none');
    expect(resolveAccess(tie, '/c', { cwd: '/' })).toBe('none');
  });

  it('grants everything under unrestricted and external policies', () => {
    expect(resolveAccess({ kind: 'unrestricted' }, '/etc/shadow', context)).toBe('write');
    expect(resolveAccess({ kind: 'external-sandbox' }, '/etc/shadow', context)).toBe('write');
  });

  it('resolves Windows paths case-insensitively', () => {
    const windows: FileSystemPolicy = {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        { path: { type: 'glob', pattern: '**\\*.pem' }, access: 'none' },
      ],
    };
    const winContext = { cwd: 'C:\\Users\\Dev\\Proj', pathStyle: 'win32' as const };
    expect(resolveAccess(windows, 'c:\\users\\dev\\proj\\src\\a.ts', winContext)).toBe('write');
    expect(resolveAccess(windows, 'C:\\Windows\\System32', winContext)).toBe('read');
    expect(resolveAccess(windows, 'C:\\Users\\Dev\\Proj\\keys\\k.PEM', winContext)).toBe('none');
  });
});
