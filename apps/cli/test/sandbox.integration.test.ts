import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, runUx } from './cli-harness.js';

useLeakCheck();

const NO_TMP = '[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';

describe('ux sandbox', () => {
  it('lets the command write in the workspace and blocks a write outside, passing the exit code on', async () => {
    const home = makeHome({ config: NO_TMP });
    const outside = join(home.home, 'outside.txt');
    const result = await runUx(
      ['sandbox', '--', 'sh', '-c', `echo in > in.txt; echo out > ${outside}; exit 7`],
      home,
    );
    expect(result.status).toBe(7);
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(readFileSync(join(home.workspace, 'in.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(outside)).toBe(false);
  });

  it('reports a signal death as 128 + the signal', async () => {
    const result = await runUx(['sandbox', '--', 'sh', '-c', 'kill -TERM $$'], makeHome());
    expect(result.status).toBe(143);
  });

  it('passes stdin and the environment through', async () => {
    const home = makeHome();
    const result = await runUx(['sandbox', '--', 'sh', '-c', 'read line; echo "$line from $UX_HOME"'], home, {
      input: 'hello\n',
    });
    expect(result).toMatchObject({ status: 0, stdout: `hello from ${home.home}\n` });
  });

  it('read-only mode blocks the workspace too', async () => {
    const home = makeHome();
    const result = await runUx(['sandbox', '--sandbox', 'read-only', '--', 'touch', 'x'], home);
    expect(result.status).toBe(1);
    expect(existsSync(join(home.workspace, 'x'))).toBe(false);
  });

  it('adds writable roots and deny-read paths', async () => {
    const home = makeHome({ config: NO_TMP });
    const extra = join(home.home, 'extra');
    mkdirSync(extra);
    writeFileSync(join(home.workspace, 'secret.txt'), 'secret');
    const result = await runUx(
      [
        'sandbox',
        '--writable-root',
        extra,
        '--deny-read',
        'secret.txt',
        '--',
        'sh',
        '-c',
        `echo ok > ${extra}/f; cat secret.txt`,
      ],
      home,
    );
    expect(result.status).toBe(1);
    expect(result.stdout).not.toContain('secret');
    expect(readFileSync(join(extra, 'f'), 'utf8')).toBe('ok\n');
  });

  it('has no network unless --network', async () => {
    const server = createServer((socket) => socket.end('hello over tcp\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const script = `require('net').connect(${port},'127.0.0.1').on('data',d=>process.stdout.write(d)).on('error',e=>{console.error(e.code);process.exit(3)})`;
    try {
      const home = makeHome();
      const off = await runUx(['sandbox', '--', process.execPath, '-e', script], home);
      expect(off.status).toBe(3);
      expect(off.stdout).toBe('');
      const on = await runUx(['sandbox', '--network', '--', process.execPath, '-e', script], home);
      expect(on).toMatchObject({ status: 0, stdout: 'hello over tcp\n' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails closed when the configured backend cannot run here, saying how to fix it', async () => {
    const home = makeHome({ config: 'sandbox_backends = ["seatbelt"]\n' });
    const result = await runUx(['sandbox', '--', 'touch', 'x'], home);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('seatbelt runs only on darwin');
    expect(existsSync(join(home.workspace, 'x'))).toBe(false);
  });

  it('refuses a mode the requirements do not allow, naming both places', async () => {
    const home = makeHome({ requirements: 'allowed_sandbox_modes = ["read-only"]\n' });
    const result = await runUx(['sandbox', '--sandbox', 'workspace-write', '--', 'touch', 'x'], home);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `ux: ${home.requirements}:1:1: sandbox mode "workspace-write" (from --sandbox workspace-write) is not allowed here: allowed_sandbox_modes = ["read-only"]\n`,
    );
    expect(existsSync(join(home.workspace, 'x'))).toBe(false);
  });

  it.each([
    [
      ['sandbox', '--mode', 'danger-full-access', '--', 'true'],
      '--mode must be one of read-only, workspace-write, got "danger-full-access"',
    ],
    [
      ['sandbox', '--mode', 'read-only', '--writable-root', '.', '--', 'true'],
      '--writable-root needs --mode workspace-write',
    ],
    [['sandbox', '--writable-root', '/no/such', '--', 'true'], '--writable-root /no/such: no such directory'],
    [['sandbox', '--netwrok', '--', 'true'], 'unknown option --netwrok (did you mean "--network"'],
    [['sandbox'], 'no command given; put it after --'],
  ])('%j is a usage error', async (args, message) => {
    const result = await runUx(args, makeHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('ux doctor', () => {
  it('checks node-pty, the files and every backend, and says the sandbox works', async () => {
    const home = makeHome();
    const result = await runUx(['doctor'], home);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^ok +node +\d+\.\d+\.\d+$/m);
    expect(result.stdout).toMatch(/^ok +node-pty +a terminal starts$/m);
    expect(result.stdout).toContain(`${home.config}: not present, defaults apply`);
    expect(result.stdout).toMatch(
      /^ok +sandbox bwrap +works, version [\d.]+; bwrapPath: \/\S+; argv0: (yes|no); disableUserns: (yes|no); userNamespaces: yes; seccomp: yes; (enforces [a-z_]+(, [a-z_]+)*|declares nothing it enforces \(no sandboxed policy runs on it\)); source: shipped with ux \(@ux\/sandbox-bwrap\)$/m,
    );
    expect(result.stdout).toMatch(
      /^skip +sandbox seatbelt +not on this platform \(runs on darwin\); source: shipped with ux \(@ux\/sandbox-seatbelt\)$/m,
    );
    expect(result.stdout).toMatch(
      /^skip +sandbox windows-token +not on this platform \(runs on win32\); source: shipped with ux \(@ux\/sandbox-windows-token\)$/m,
    );
    expect(result.stdout).toMatch(/^ok +sandbox for workspace-write +bwrap will be used$/m);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('ux can run here.');
  });

  it('reports as JSON', async () => {
    const result = await runUx(['doctor', '--json'], makeHome({ config: 'approval_policy = "never"\n' }));
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(report.checks).toContainEqual(expect.objectContaining({ name: 'config', status: 'ok' }));
    expect(report.checks).toContainEqual(
      expect.objectContaining({
        name: 'approval policy',
        detail: expect.stringMatching(/^never \(.*config\.toml:1:1\)$/),
      }),
    );
  });

  it('exits 1 with the fix when the configured sandbox cannot work', async () => {
    const home = makeHome({ config: 'sandbox_backends = ["seatbelt"]\n' });
    const result = await runUx(['doctor'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(
      /^skip +sandbox bwrap +works.*; not enabled by sandbox_backends in the config$/m,
    );
    expect(result.stdout).toMatch(/^fail +sandbox for workspace-write +.*seatbelt runs only on darwin/m);
    expect(result.stdout).toMatch(/^ +fix: /m);
    expect(result.stdout).toContain('ux cannot run as configured here');
  });

  it('exits 1 naming the file and line of a broken config', async () => {
    const home = makeHome({ config: '[sandbox_workspace_write]\nwritable_roots = "here"\n' });
    const result = await runUx(['doctor'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^fail +config +${home.config.replace(/[.]/g, '\\.')}:2:1: sandbox_workspace_write\\.writable_roots must be an array of strings, got "here"$`,
        'm',
      ),
    );
  });

  it('has no seccomp or user namespace to blame when a sandbox is not needed', async () => {
    const result = await runUx(
      ['doctor'],
      makeHome({ config: 'sandbox_mode = "danger-full-access"\nsandbox_backends = ["seatbelt"]\n' }),
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /^ok +sandbox for danger-full-access +no sandbox is applied in this mode$/m,
    );
  });
});
