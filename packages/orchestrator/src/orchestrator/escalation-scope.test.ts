import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { EffectivePolicy } from '@ux/protocol/core';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { escalationScope } from './escalation-scope.js';

function workspaceWrite(extra: string[] = [], privateTmp = false): EffectivePolicy {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
        { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
        ...extra.map((path) => ({ path: { type: 'path' as const, path }, access: 'write' as const })),
      ],
    },
    network: 'restricted',
    ...(privateTmp ? { privateTmp: true } : {}),
  };
}

describe('escalationScope', () => {
  it('unites the writable roots of every policy, for the project root and the command’s own cwd', () => {
    const project = tempDir('ux-scope-project-');
    const elsewhere = tempDir('ux-scope-cwd-');
    const extra = tempDir('ux-scope-extra-');
    const tmp = tempDir('ux-scope-tmpdir-');
    const scope = escalationScope({
      policies: [workspaceWrite(), workspaceWrite([extra])],
      projectRoot: project,
      commandCwd: elsewhere,
      tmpdirs: [tmp, undefined, 'relative/ignored'],
      sessionStartMs: 1,
      env: { HOME: '/home/x' },
      homeDir: '/home/x',
    });
    expect(scope.writableRoots).toEqual(expect.arrayContaining([project, elsewhere, extra, '/tmp', tmp]));
    expect(scope.tmpRoots).toEqual(['/tmp', tmp]);
    expect(scope.privateTmp).toBe(false);
  });

  it('with a private /tmp: the layout has no /tmp, which still counts as the sandbox’s own', () => {
    const project = tempDir('ux-scope-project-');
    const tmp = tempDir('ux-scope-tmpdir-');
    mkdirSync(join(tmp, 'sub'));
    const scope = escalationScope({
      policies: [workspaceWrite([], true)],
      projectRoot: project,
      tmpdirs: [`${join(tmp, 'sub')}/`],
      sessionStartMs: 1,
      env: {},
      homeDir: undefined,
    });
    expect(scope.privateTmp).toBe(true);
    expect(scope.layoutRoots).toEqual([project]);
    expect(scope.tmpRoots).toEqual(['/tmp', join(tmp, 'sub')]);
    expect(scope.writableRoots).toEqual([project, '/tmp', join(tmp, 'sub')]);
  });

  it('counts the whole disk when the policy restricts nothing', () => {
    const scope = escalationScope({
      policies: [{ fileSystem: { kind: 'unrestricted' }, network: 'enabled' }],
      projectRoot: '/',
      tmpdirs: [],
      sessionStartMs: 1,
      env: {},
      homeDir: undefined,
    });
    expect(scope.writableRoots).toContain('/');
  });
});
