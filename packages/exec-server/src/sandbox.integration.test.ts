// `process/start` with a `sandbox`: applied for real with bubblewrap (this platform's backend, through
// the registry), reported honestly, and refused with a fix when no sandbox can be applied.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PATH, uri, WireSession } from './test-support.js';

useLeakCheck(5_000);

async function ready(args?: string[]) {
  const session = await WireSession.ready(args);
  onTestFinished(async () => {
    await session.close();
  });
  return session;
}

/** The workspace-write context the Codex 0.169.0 client sends (spec §7.1), for `workspace`. */
function workspaceWrite(workspace: string, extra: object[] = []) {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
          { path: { type: 'special', value: { kind: 'project_roots' } }, access: 'write' },
          {
            path: { type: 'special', value: { kind: 'project_roots', subpath: '.git' } },
            access: 'read',
            missing_path_behavior: 'skip',
          },
          ...extra,
        ],
      },
      network: 'restricted',
    },
    cwd: uri(workspace),
    workspaceRoots: [uri(workspace)],
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
  };
}

describe('sandboxed processes', () => {
  it('writes inside the workspace, is denied outside, and says so (T7)', async () => {
    const session = await ready();
    const root = tempDir('ux-es-sandbox-');
    const workspace = join(root, 'ws');
    mkdirSync(workspace);
    const outside = join(root, 'outside.txt');
    const started = await session.request('process/start', {
      processId: 'w1',
      argv: ['sh', '-c', `echo ok > inside.txt && echo inside-ok; touch ${outside}`],
      cwd: uri(workspace),
      env: { PATH },
      tty: false,
      arg0: null,
      sandbox: workspaceWrite(workspace),
    });
    expect(started.result).toEqual({ processId: 'w1', sandboxType: 'linuxSeccomp' });
    const events = await session.finished('w1');
    expect(events.find((m) => m.method === 'process/exited')!.params).toMatchObject({
      exitCode: 1,
      sandboxDenied: true,
    });
    expect(session.output('w1')).toContain('inside-ok');
    expect(session.output('w1')).toContain('Read-only file system');
    expect(existsSync(join(workspace, 'inside.txt'))).toBe(true);
    expect(existsSync(outside)).toBe(false);
    const read = (await session.request('process/read', { processId: 'w1' })).result!;
    expect(read.sandboxDenied).toBe(true);
  });

  it('hides files matched by a deny glob', async () => {
    const session = await ready();
    const workspace = tempDir('ux-es-glob-');
    writeFileSync(join(workspace, 'secret.env'), 'TOP-SECRET\n');
    writeFileSync(join(workspace, 'notes.txt'), 'visible notes\n');
    await session.request('process/start', {
      processId: 'g',
      argv: ['sh', '-c', 'cat notes.txt; cat secret.env'],
      cwd: uri(workspace),
      env: { PATH },
      tty: false,
      sandbox: workspaceWrite(workspace, [
        { path: { type: 'glob_pattern', pattern: `${workspace}/**/*.env` }, access: 'deny' },
      ]),
    });
    const events = await session.finished('g');
    expect(session.output('g')).toContain('visible notes');
    expect(session.output('g')).not.toContain('TOP-SECRET');
    expect(events.find((m) => m.method === 'process/exited')!.params!.exitCode).not.toBe(0);
  });

  it('runs without a sandbox for permissions "disabled", and reports none', async () => {
    const session = await ready();
    const started = await session.request('process/start', {
      processId: 'd',
      argv: ['true'],
      cwd: uri('/tmp'),
      env: { PATH },
      tty: false,
      sandbox: { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' },
    });
    expect(started.result).toEqual({ processId: 'd', sandboxType: 'none' });
  });

  it('refuses a sandboxed start when no backend can apply one, with a fix, and runs nothing', async () => {
    const session = await ready(['--listen', 'stdio', '--sandbox-backends', '']);
    const init = session.messages.find((m) => m.id === 1)!;
    expect((init.result!.environmentInfo as { capabilities: object }).capabilities).toMatchObject({
      uxSandboxedProcesses: false,
    });
    const workspace = tempDir('ux-es-nobox-');
    const marker = join(workspace, 'ran');
    const answer = await session.request('process/start', {
      processId: 'n',
      argv: ['touch', marker],
      cwd: uri(workspace),
      env: { PATH },
      tty: false,
      sandbox: workspaceWrite(workspace),
    });
    expect(answer.error?.code).toBe(-32603);
    expect(answer.error?.message).toMatch(
      /^sandbox requested but none can be applied here: .*; fix: .*The command was not run\.$/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses arg0 with a sandbox and unknown special paths', async () => {
    const session = await ready();
    const workspace = tempDir('ux-es-refuse-');
    const base = { processId: 'r', argv: ['true'], cwd: uri(workspace), env: { PATH }, tty: false };
    expect(
      (await session.request('process/start', { ...base, arg0: 'x', sandbox: workspaceWrite(workspace) }))
        .error?.message,
    ).toContain('arg0 cannot be combined with a sandbox');
    const odd = workspaceWrite(workspace, [
      { path: { type: 'special', value: { kind: 'home_dir' } }, access: 'write' },
    ]);
    expect((await session.request('process/start', { ...base, sandbox: odd })).error?.message).toContain(
      'unknown special path kind "home_dir"',
    );
  });
});
