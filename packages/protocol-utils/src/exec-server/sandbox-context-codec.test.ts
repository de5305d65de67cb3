import { type SandboxContext, sandboxContextSchema } from '@ux/protocol';
import type { EffectivePolicy, FileSystemEntry, SandboxPlanRequest } from '@ux/protocol/core';
import { describeWireIssues, InvalidArgumentsError } from '@ux/protocol/core';
import { codexWorkspaceWriteContext } from '@ux/protocol-testing';
import { describe, expect, it } from 'vitest';
import { decodeSandboxContext, encodeSandboxContext } from './sandbox-context-codec.js';

const base = { windowsSandboxLevel: 'disabled' as const };

/** A plan request for `policy` in `cwd`; what the client hands `encodeSandboxContext`. */
const planRequest = (
  policy: EffectivePolicy,
  cwd = '/work/proj',
  extra: Partial<SandboxPlanRequest> = {},
): SandboxPlanRequest => ({
  argv: ['true'],
  cwd,
  env: { HOME: '/home/dev' },
  tty: false,
  policy,
  ...extra,
});

/** Both halves: what the client sends, checked against the wire schema, read back as the server does. */
function roundTrip(request: SandboxPlanRequest) {
  const wire = encodeSandboxContext(request);
  // What travels is JSON the server validates with the wire schema before decoding it.
  const sent = sandboxContextSchema.parse(JSON.parse(JSON.stringify(wire)));
  return decodeSandboxContext(sent);
}

const restricted = (entries: FileSystemEntry[], depth?: number): EffectivePolicy => ({
  fileSystem: {
    kind: 'restricted',
    entries,
    ...(depth === undefined ? {} : { glob_scan_max_depth: depth }),
  },
  network: 'restricted',
});

describe('encodeSandboxContext → decodeSandboxContext', () => {
  it('read-only: the same policy, with the cwd as the one project root', () => {
    const policy = restricted([{ path: { type: 'special', value: 'root' }, access: 'read' }]);
    expect(roundTrip(planRequest(policy))).toEqual({ policy, projectRoots: ['/work/proj'] });
  });

  it('workspace-write: writable roots, subpaths, deny entries and globs as the server must enforce them', () => {
    // What the wire carries as it is: special paths (but cwd), absolute paths and absolute globs.
    const unchanged: FileSystemEntry[] = [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'project_roots' }, access: 'write' },
      { path: { type: 'special', value: 'project_roots', subpath: '.git' }, access: 'read' },
      { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
      { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
      { path: { type: 'special', value: 'minimal' }, access: 'read' },
      { path: { type: 'path', path: '/opt/cache' }, access: 'write' },
      { path: { type: 'glob', pattern: '/srv/**/secret-*' }, access: 'none' },
    ];
    const policy = restricted(
      [
        ...unchanged,
        { path: { type: 'path', path: 'build' }, access: 'write' },
        { path: { type: 'path', path: '~/.ssh' }, access: 'none' },
        { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
      ],
      12,
    );
    const decoded = roundTrip(
      planRequest(policy, '/work/proj', { projectRoots: ['/work/proj', '/work/lib'] }),
    );
    expect(decoded).toEqual({
      policy: restricted(
        [
          ...unchanged,
          // The wire has no relative paths: they arrive anchored at the cwd, `~` at the command's HOME.
          { path: { type: 'path', path: '/work/proj/build' }, access: 'write' },
          { path: { type: 'path', path: '/home/dev/.ssh' }, access: 'none' },
          { path: { type: 'glob', pattern: '/work/proj/**/*.env' }, access: 'none' },
        ],
        12,
      ),
      projectRoots: ['/work/proj', '/work/lib'],
    });
  });

  it('the cwd special path becomes the concrete directory (the wire has no `cwd` kind)', () => {
    const policy = restricted([
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
      { path: { type: 'special', value: 'cwd', subpath: 'out/logs' }, access: 'none' },
    ]);
    const wire = encodeSandboxContext(planRequest(policy, '/work/proj'));
    expect(wire.permissions).toMatchObject({
      file_system: {
        entries: [
          { path: { type: 'path', path: 'file:///work/proj' }, access: 'write' },
          { path: { type: 'path', path: 'file:///work/proj/out/logs' }, access: 'deny' },
        ],
      },
    });
    // Not the same policy back: the server enforces the directory the cwd was when the client sent it.
    expect(roundTrip(planRequest(policy, '/work/proj'))?.policy).toEqual(
      restricted([
        { path: { type: 'path', path: '/work/proj' }, access: 'write' },
        { path: { type: 'path', path: '/work/proj/out/logs' }, access: 'none' },
      ]),
    );
  });

  it('danger-full-access and an external sandbox, with network on and off', () => {
    for (const network of ['enabled', 'restricted'] as const) {
      const unrestricted: EffectivePolicy = { fileSystem: { kind: 'unrestricted' }, network };
      expect(roundTrip(planRequest(unrestricted))).toEqual({
        policy: unrestricted,
        projectRoots: ['/work/proj'],
      });
      const external: EffectivePolicy = { fileSystem: { kind: 'external-sandbox' }, network };
      expect(roundTrip(planRequest(external))).toEqual({ policy: external, projectRoots: ['/work/proj'] });
      const withEntries = restricted([{ path: { type: 'special', value: 'root' }, access: 'read' }]);
      expect(roundTrip(planRequest({ ...withEntries, network }))?.policy.network).toBe(network);
    }
  });

  it('paths with spaces, percent signs, # and ?, and non-ASCII letters arrive unchanged', () => {
    const odd = ['/work/my proj', '/work/100% done', '/work/a#b?c', '/work/Zürich/日本語', "/work/it's (1)"];
    for (const cwd of odd) {
      const policy = restricted([
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        { path: { type: 'path', path: `${cwd}/sub dir` }, access: 'none' },
      ]);
      expect(roundTrip(planRequest(policy, cwd, { projectRoots: [cwd] }))).toEqual({
        policy: restricted([
          { path: { type: 'path', path: cwd }, access: 'write' },
          { path: { type: 'path', path: `${cwd}/sub dir` }, access: 'none' },
        ]),
        projectRoots: [cwd],
      });
    }
  });

  it('sends the cwd and workspace roots as file:// URIs, and Windows sandboxing off', () => {
    const wire = encodeSandboxContext(
      planRequest({ fileSystem: { kind: 'unrestricted' }, network: 'enabled' }, '/work/my proj'),
    );
    expect(wire).toEqual({
      permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network: 'enabled' },
      cwd: 'file:///work/my%20proj',
      workspaceRoots: ['file:///work/my%20proj'],
      windowsSandboxLevel: 'disabled',
    });
  });

  it('refuses a ~ path without HOME in the command environment', () => {
    const policy = restricted([{ path: { type: 'path', path: '~/.aws' }, access: 'none' }]);
    const error = (() => {
      try {
        return encodeSandboxContext(planRequest(policy, '/work', { env: {} }));
      } catch (caught) {
        return caught;
      }
    })();
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    expect((error as InvalidArgumentsError).issues).toEqual([
      { path: 'policy', message: "~/.aws needs HOME in the command's environment" },
    ]);
  });
});

describe('decodeSandboxContext', () => {
  it('asks for no sandbox when there is none or permissions are disabled', () => {
    expect(decodeSandboxContext(null)).toBeUndefined();
    expect(decodeSandboxContext(undefined)).toBeUndefined();
    expect(decodeSandboxContext({ ...base, permissions: { type: 'disabled' } })).toBeUndefined();
  });

  it('reads the workspace-write entries Codex sends, with workspaceRoots as project roots', () => {
    const context = codexWorkspaceWriteContext('file:///work/ws', [
      { path: { type: 'path', path: 'file:///home/dev/.ssh' }, access: 'deny' },
      { path: { type: 'glob_pattern', pattern: '**/*.env' }, access: 'none' },
    ]);
    expect(decodeSandboxContext(context)).toEqual({
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'project_roots' }, access: 'write' },
            { path: { type: 'special', value: 'project_roots', subpath: '.git' }, access: 'read' },
            { path: { type: 'path', path: '/home/dev/.ssh' }, access: 'none' },
            { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
          ],
        },
        network: 'restricted',
      },
      projectRoots: ['/work/ws'],
    });
  });

  it('clamps glob_scan_max_depth to 1–64', () => {
    const depth = (value: number) =>
      decodeSandboxContext({
        ...base,
        permissions: {
          type: 'managed',
          file_system: { type: 'restricted', entries: [], glob_scan_max_depth: value },
          network: 'restricted',
        },
      })?.policy.fileSystem;
    expect(depth(0)).toMatchObject({ glob_scan_max_depth: 1 });
    expect(depth(7)).toMatchObject({ glob_scan_max_depth: 7 });
    expect(depth(65)).toMatchObject({ glob_scan_max_depth: 64 });
  });

  it('grants project_roots nothing without workspaceRoots, as Codex does', () => {
    const request = decodeSandboxContext({
      ...base,
      permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network: 'enabled' },
    });
    expect(request).toEqual({
      policy: { fileSystem: { kind: 'unrestricted' }, network: 'enabled' },
      projectRoots: [],
    });
    expect(
      decodeSandboxContext({ ...base, permissions: { type: 'external', network: 'restricted' } })?.policy,
    ).toEqual({
      fileSystem: { kind: 'external-sandbox' },
      network: 'restricted',
    });
  });

  it('refuses what it cannot express exactly, naming the field', () => {
    const odd = (path: object) =>
      ({
        ...base,
        permissions: {
          type: 'managed' as const,
          file_system: { type: 'restricted' as const, entries: [{ path, access: 'read' as const }] },
          network: 'restricted' as const,
        },
      }) as SandboxContext;
    const failure = (context: SandboxContext) => {
      try {
        decodeSandboxContext(context);
      } catch (error) {
        if (InvalidArgumentsError.isInstance(error)) return error;
        throw error;
      }
      throw new Error('decoded what it should have refused');
    };

    const kind = failure(odd({ type: 'special', value: { kind: 'home' } }));
    expect(kind.issues[0]?.path).toBe('sandbox.permissions.file_system.entries[0].path.value.kind');
    expect(describeWireIssues(kind)).toBe(
      'sandbox.permissions.file_system.entries[0]: unknown special path kind "home"; known kinds: root, minimal, cwd, project_roots, tmpdir, slash_tmp',
    );

    const bare = failure(odd({ type: 'path', path: '/bare/path' }));
    expect(bare.issues[0]?.path).toBe('sandbox.permissions.file_system.entries[0].path');
    expect(describeWireIssues(bare)).toBe(
      'invalid URI in sandbox.permissions.file_system.entries[0].path: "/bare/path" is not a URI; send a file:// URI',
    );

    const root = failure({
      ...base,
      permissions: { type: 'external', network: 'restricted' },
      workspaceRoots: ['file:///ok', 'https://example.com/ws'],
    });
    expect(root.issues).toEqual([
      {
        path: 'sandbox.workspaceRoots[1]',
        message: 'invalid URI in sandbox.workspaceRoots[1]: "https://example.com/ws" is not a file:// URI',
      },
    ]);
  });
});
