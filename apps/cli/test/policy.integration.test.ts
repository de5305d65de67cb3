// One policy everywhere: deny-read, writable roots, network, profiles, -c and bwrap_path mean the same on
// `ux exec`, `ux mcp` and `ux sandbox`, and bubblewrap enforces them.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectMcp, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

/** /tmp is writable in workspace-write by default; these tests need "outside" to be outside. */
const NO_TMP = '[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';

/** `ux mcp ARGS…` under the MCP SDK's own client, closed after the test. */
async function mcp(home: UxHome, args: string[]) {
  const client = await connectMcp(home, args);
  return async (cmd: string, extra: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd, ...extra } });
    const text = (result.content as { text: string }[]).map((part) => part.text).join('');
    return {
      text,
      output: text.slice(text.indexOf('Output:\n') + 8),
      exit: /exited with code (-?\d+)/.exec(text)?.[1],
    };
  };
}

/** A TCP server on 127.0.0.1 of this host, and a node script that prints what it says (exit 3 when it cannot connect). */
async function tcpServer() {
  const server: Server = createServer((socket) => socket.end('hello over tcp\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const script = `require("net").connect(${port},"127.0.0.1").on("data",d=>process.stdout.write(d)).on("error",e=>{console.error(e.code);process.exit(3)})`;
  return { argv: [process.execPath, '-e', script], cmd: `${process.execPath} -e '${script}'` };
}

function secrets(home: UxHome) {
  mkdirSync(join(home.home, 'keys'));
  writeFileSync(join(home.home, 'keys', 'id'), 'KEY-IN-HOME');
  writeFileSync(join(home.workspace, 'top.pem'), 'PEM-AT-TOP');
  mkdirSync(join(home.workspace, 'sub'));
  writeFileSync(join(home.workspace, 'sub', 'deep.pem'), 'PEM-IN-SUB');
  writeFileSync(join(home.workspace, 'notes.txt'), 'PLAIN-NOTES');
}

describe('deny-read', () => {
  it('ux exec --deny-read hides a path relative to --cwd, a ~ path and a glob; the rest stays readable', async () => {
    const home = makeHome({ config: 'approval_policy = "never"\n' });
    secrets(home);
    const script = 'cat ~/keys/id; cat top.pem; cat sub/deep.pem; cat notes.txt';
    const open = await runUx(['exec', '--', script], home);
    expect(open.stdout).toContain('KEY-IN-HOME');
    const result = await runUx(
      [
        'exec',
        '--deny-read',
        '~/keys',
        '--deny-read',
        '**/*.pem',
        '--deny-read',
        'notes.nothing',
        '--',
        script,
      ],
      home,
    );
    expect(result.stdout).not.toMatch(/KEY-IN-HOME|PEM-AT-TOP|PEM-IN-SUB/);
    expect(result.stdout).toContain('PLAIN-NOTES');
    expect(result.stdout).toMatch(/Permission denied|Is a directory/);
  });

  it('config deny_read applies to ux exec, with globs relative to the session directory', async () => {
    const home = makeHome({ config: 'approval_policy = "never"\ndeny_read = ["~/keys/id", "**/*.pem"]\n' });
    secrets(home);
    const result = await runUx(
      ['exec', '--', 'cat ~/keys/id; cat top.pem; cat sub/deep.pem; cat notes.txt'],
      home,
    );
    expect(result.stdout).not.toMatch(/KEY-IN-HOME|PEM-AT-TOP|PEM-IN-SUB/);
    expect(result.stdout).toContain('PLAIN-NOTES');
  });

  it('ux mcp --deny-read and config deny_read hide files from exec_command, also for a command run in a subdirectory', async () => {
    const home = makeHome({ config: 'approval_policy = "never"\ndeny_read = ["**/*.pem"]\n' });
    secrets(home);
    const exec = await mcp(home, ['--deny-read', '~/keys']);
    const denied = await exec('cat ~/keys/id; cat ../top.pem; cat deep.pem; cat ../notes.txt', {
      workdir: 'sub',
    });
    expect(denied.output).not.toMatch(/KEY-IN-HOME|PEM-AT-TOP|PEM-IN-SUB/);
    expect(denied.output).toContain('PLAIN-NOTES');
  });

  it('hides the matches of a glob outside the workspace and every writable root', async () => {
    const home = makeHome({ config: `approval_policy = "never"\ndeny_read = ["~/keys/i?"]\n${NO_TMP}` });
    secrets(home);
    const result = await runUx(['exec', '--', 'cat ~/keys/id; cat notes.txt'], home);
    expect(result.stdout).not.toContain('KEY-IN-HOME');
    expect(result.stdout).toContain('PLAIN-NOTES');
  });

  it('ux sandbox takes deny_read from the config too', async () => {
    const home = makeHome({ config: 'deny_read = ["notes.txt"]\n' });
    secrets(home);
    const result = await runUx(['sandbox', '--', 'sh', '-c', 'cat sub/deep.pem; cat notes.txt'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('PEM-IN-SUB');
    expect(result.stderr).toContain('notes.txt: Permission denied');
  });

  it('managed requirements add deny-read entries that -c deny_read=[] cannot drop', async () => {
    const home = makeHome({
      config: 'approval_policy = "never"\ndeny_read = ["notes.txt"]\n',
      requirements: 'deny_read = ["~/keys"]\n',
    });
    secrets(home);
    const result = await runUx(['exec', '-c', 'deny_read=[]', '--', 'cat notes.txt; cat ~/keys/id'], home);
    expect(result.stdout).toContain('PLAIN-NOTES');
    expect(result.stdout).not.toContain('KEY-IN-HOME');
  });

  it('is refused with a mode that has no sandbox, naming where each came from', async () => {
    const flagged = await runUx(
      ['exec', '--sandbox', 'danger-full-access', '--deny-read', 'x', '--', 'true'],
      makeHome(),
    );
    expect(flagged.status).toBe(2);
    expect(flagged.stderr).toContain(
      'ux: --deny-read x needs a sandbox, but sandbox mode danger-full-access (from --sandbox danger-full-access) runs commands without a ux sandbox',
    );
    const home = makeHome({ config: 'sandbox_mode = "danger-full-access"\n\ndeny_read = ["~/.ssh"]\n' });
    const configured = await runUx(['exec', '--', 'touch ran'], home);
    expect(configured.status).toBe(1);
    expect(configured.stderr).toBe(
      `ux: ${home.config}:3:1: deny_read needs a sandbox to hide "~/.ssh", but sandbox mode danger-full-access (from ${home.config}:1:1) runs commands without a ux sandbox; choose read-only or workspace-write, or clear the list for this run with -c deny_read=[]\n`,
    );
    expect(existsSync(join(home.workspace, 'ran'))).toBe(false);
  });
});

describe('writable roots', () => {
  it('ux exec --writable-root lets the command write there, and only there', async () => {
    const home = makeHome({ config: `approval_policy = "never"\n${NO_TMP}` });
    mkdirSync(join(home.home, 'extra'));
    mkdirSync(join(home.home, 'other'));
    const script = 'echo a > ~/extra/f; echo b > ~/other/f';
    const result = await runUx(['exec', '--writable-root', '~/extra', '--', script], home);
    expect(readFileSync(join(home.home, 'extra', 'f'), 'utf8')).toBe('a\n');
    expect(existsSync(join(home.home, 'other', 'f'))).toBe(false);
    expect(result.stdout).toContain('Read-only file system');
  });

  it('ux mcp --writable-root and -c sandbox_workspace_write.writable_roots both add roots', async () => {
    const home = makeHome({ config: `approval_policy = "never"\n${NO_TMP}` });
    const [one, two] = [join(home.home, 'one'), join(home.home, 'two')];
    mkdirSync(one);
    mkdirSync(two);
    const exec = await mcp(home, [
      '--writable-root',
      one,
      '-c',
      `sandbox_workspace_write.writable_roots=["${two}"]`,
    ]);
    const result = await exec(`echo 1 > ${one}/f && echo 2 > ${two}/f`);
    expect(result.exit).toBe('0');
    expect(readFileSync(join(one, 'f'), 'utf8')).toBe('1\n');
    expect(readFileSync(join(two, 'f'), 'utf8')).toBe('2\n');
  });

  it('needs workspace-write', async () => {
    const result = await runUx(
      ['exec', '--sandbox', 'read-only', '--writable-root', '.', '--', 'true'],
      makeHome(),
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      'ux: --writable-root needs --sandbox workspace-write (the sandbox mode is read-only, from --sandbox read-only)',
    );
  });
});

describe('network', () => {
  it('ux exec reaches a host server only with --network or network_access, and --no-network wins over the config', async () => {
    const { argv } = await tcpServer();
    const home = makeHome({ config: 'approval_policy = "never"\n' });
    const off = await runUx(['exec', '--', ...argv], home);
    expect(off.status).toBe(3);
    expect(off.stdout).not.toContain('hello over tcp');
    const on = await runUx(['exec', '--network', '--', ...argv], home);
    expect(on.status).toBe(0);
    expect(on.stdout).toContain('hello over tcp');
    const configured = await runUx(
      ['exec', '-c', 'sandbox_workspace_write.network_access=true', '--', ...argv],
      home,
    );
    expect(configured.stdout).toContain('hello over tcp');
    const refused = await runUx(
      ['exec', '-c', 'sandbox_workspace_write.network_access=true', '--no-network', '--', ...argv],
      home,
    );
    expect(refused.status).toBe(3);
    expect(refused.stdout).not.toContain('hello over tcp');
  });

  it('ux mcp reaches a host server only with --network', async () => {
    const { cmd } = await tcpServer();
    const home = makeHome({ config: 'approval_policy = "never"\n' });
    const off = await (await mcp(home, []))(cmd);
    expect(off.exit).toBe('3');
    const on = await (await mcp(home, ['--network']))(cmd);
    expect(on.exit).toBe('0');
    expect(on.output).toContain('hello over tcp');
  });

  it('--network and --no-network together are a usage error', async () => {
    const result = await runUx(['sandbox', '--network', '--no-network', '--', 'true'], makeHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--network and --no-network contradict each other; give one');
  });
});

describe('--sandbox, --profile and -c on every command', () => {
  it('ux sandbox takes --sandbox, a profile and the config mode; --mode still works with a warning', async () => {
    const home = makeHome({ config: '[profiles.locked]\nsandbox_mode = "read-only"\n' });
    const readOnly = await runUx(['sandbox', '--sandbox', 'read-only', '--', 'touch', 'a'], home);
    expect(readOnly.status).toBe(1);
    expect(existsSync(join(home.workspace, 'a'))).toBe(false);
    const profiled = await runUx(['sandbox', '--profile', 'locked', '--', 'touch', 'b'], home);
    expect(profiled.status).toBe(1);
    expect(existsSync(join(home.workspace, 'b'))).toBe(false);
    const configured = await runUx(['sandbox', '-c', 'sandbox_mode=read-only', '--', 'touch', 'c'], home);
    expect(configured.status).toBe(1);
    expect(existsSync(join(home.workspace, 'c'))).toBe(false);
    const old = await runUx(['sandbox', '--mode', 'workspace-write', '--', 'touch', 'd'], home);
    expect(old.status).toBe(0);
    expect(old.stderr).toBe('ux: warning: --mode is deprecated; use --sandbox\n');
    expect(existsSync(join(home.workspace, 'd'))).toBe(true);
  });

  it('ux sandbox refuses a configured mode without a sandbox, saying where it was set', async () => {
    const home = makeHome({ config: 'sandbox_mode = "danger-full-access"\n' });
    const result = await runUx(['sandbox', '--', 'true'], home);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      `ux: ux sandbox runs commands under a sandbox, and sandbox mode danger-full-access (from ${home.config}:1:1) has none; pass --sandbox read-only or --sandbox workspace-write`,
    );
  });

  it('ux mcp applies --profile and -c to the door', async () => {
    const home = makeHome({
      config: 'approval_policy = "never"\n[profiles.locked]\nsandbox_mode = "read-only"\n',
    });
    const locked = await (await mcp(home, ['--profile', 'locked']))('touch a');
    expect(locked.exit).not.toBe('0');
    expect(existsSync(join(home.workspace, 'a'))).toBe(false);
    const overridden = await (await mcp(home, ['-c', 'sandbox_mode=read-only']))('touch b');
    expect(overridden.exit).not.toBe('0');
    expect(existsSync(join(home.workspace, 'b'))).toBe(false);
  });

  it.each([
    [
      ['exec', '-c', 'sandbox_mode=read-onyl', '--', 'true'],
      'ux: -c sandbox_mode=read-onyl: sandbox_mode must be one of read-only, workspace-write, danger-full-access, external-sandbox, got "read-onyl" (did you mean "read-only"?)',
    ],
    [
      ['mcp', '--config', 'features.unifed_exec=false'],
      'ux: -c features.unifed_exec=false: unknown feature "unifed_exec" (did you mean "unified_exec"?)',
    ],
    [
      ['sandbox', '-c', 'network', '--', 'true'],
      'ux: -c network: expected key=value (e.g. -c sandbox_mode=read-only)',
    ],
    [
      ['exec', '-c', 'sandbox_workspace_write.network=true', '--', 'true'],
      'ux: -c sandbox_workspace_write.network=true: sandbox_workspace_write.network must be "off", "on" or a table { allow = […], deny = […] }, got true; write "on"',
    ],
    [
      ['exec', '--deny-read', '~root/x', '--', 'true'],
      'ux: --deny-read "~root/x": only ~ and ~/… are expanded',
    ],
    [['mcp', '--writable-root', '/no/such'], 'ux: --writable-root /no/such: no such directory'],
    [
      ['sandbox', '--sandbox', 'danger-full-access', '--', 'true'],
      '--sandbox must be one of read-only, workspace-write',
    ],
    [['sandbox', '--sandbox', 'read-only', '--mode', 'read-only', '--', 'true'], 'give --sandbox only'],
  ])('%j is a usage error naming the argument', async (args, message) => {
    const result = await runUx(args, makeHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('[sandbox.bwrap] path (and the deprecated bwrap_path)', () => {
  it.each([
    ['[sandbox.bwrap] path', (wrapper: string) => `[sandbox.bwrap]\npath = "${wrapper}"\n`],
    ['bwrap_path', (wrapper: string) => `bwrap_path = "${wrapper}"\n`],
  ])('%s is the bwrap every command runs', async (_key, setting) => {
    const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    const home = makeHome();
    const log = join(home.home, 'bwrap.log');
    const wrapper = join(home.home, 'my-bwrap');
    writeFileSync(wrapper, `#!/bin/sh\necho run >> ${log}\nexec ${real} "$@"\n`);
    chmodSync(wrapper, 0o755);
    writeFileSync(home.config, `approval_policy = "never"\n${setting(wrapper)}`);
    const exec = await runUx(['exec', '--', 'echo through-exec'], home);
    expect(exec.stdout).toContain('through-exec');
    const runs = readFileSync(log, 'utf8').length;
    expect(runs).toBeGreaterThan(0);
    const sandbox = await runUx(['sandbox', '--', 'true'], home);
    expect(sandbox.status).toBe(0);
    expect(readFileSync(log, 'utf8').length).toBeGreaterThan(runs);
  });

  it('fails closed naming a bwrap_path that is not there, and rejects a relative one at its line', async () => {
    const missing = makeHome({ config: 'bwrap_path = "/no/such/bwrap"\n' });
    const result = await runUx(['sandbox', '--', 'touch', 'x'], missing);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('/no/such/bwrap is not an executable file');
    expect(existsSync(join(missing.workspace, 'x'))).toBe(false);
    const relative = makeHome({ config: '\nbwrap_path = "bin/bwrap"\n' });
    const refused = await runUx(['exec', '--', 'true'], relative);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `ux: ${relative.config}:2:1: bwrap_path must be the absolute path of the bwrap binary, got "bin/bwrap"\n`,
    );
  });
});
