// Remote environments through what users run: `ux exec --env`, `ux mcp --env` under the MCP SDK
// client, and `ux doctor`, against real `ux exec-server` processes (the built CLI itself), one over
// WebSocket with a token read from the variable the config names, one over a stdio command. The
// default sandbox (workspace-write) is on: the servers apply it with bubblewrap.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntilDead } from '@ux/protocol-testing';
import { useLeakCheck } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  connectMcp,
  makeHome,
  runUx,
  startUxInTerminal,
  type UxHome,
  warmUpTerminalSpawner,
} from './cli-harness.js';

beforeAll(() => warmUpTerminalSpawner());
useLeakCheck();

const TOKEN = 'the-box-token';
let server: { url: string; child: ChildProcess; closed: Promise<void> };

let serverDir: string;
beforeAll(async () => {
  // Made here, not with makeHome: the server starts outside any test.
  const dir = mkdtempSync(join(tmpdir(), 'ux-env-server-'));
  serverDir = dir;
  writeFileSync(join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [BIN, 'exec-server', '--listen', 'ws://127.0.0.1:0', '--ws-token-file', join(dir, 'token')],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, UX_HOME: dir, WHERE: 'box' },
    },
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      seen += text;
      const match = /^(ws:\/\/\S+)\n/.exec(seen);
      if (match) resolve(match[1]!);
    });
    void closed.then(() => reject(new Error('ux exec-server exited before listening')));
  });
  server = { url, child, closed };
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.closed;
  rmSync(serverDir, { recursive: true, force: true });
});

/** A home whose config defines `box` (WebSocket, token in $BOX_TOKEN) and `dev` (stdio command). */
function homeWithEnvironments(extra = ''): UxHome {
  const home = makeHome({
    config: `${extra}
[environments.box]
url = "${server.url}"
token_env = "BOX_TOKEN"

[environments.dev]
command = ["env", "WHERE=dev", ${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}, "exec-server", "--listen", "stdio"]
`,
  });
  home.env.BOX_TOKEN = TOKEN;
  return home;
}

/**
 * Says where the command ran: each server has WHERE in its environment (box, dev), which commands
 * inherit there; this machine's ux has none.
 */
const WHERE_AM_I = `echo "where=\${WHERE:-here}"`;

describe('ux exec --env', () => {
  it('runs in the WebSocket environment, sandboxed there', async () => {
    const home = homeWithEnvironments();
    const result = await runUx(
      ['exec', '--env', 'box', '--', `${WHERE_AM_I}; touch /etc/ux-nope; echo status=$?`],
      home,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('where=box');
    expect(result.stdout).toMatch(/Read-only file system/i);
    expect(result.stdout).toContain('status=1');
  });

  it('runs in the stdio environment, and locally without --env', async () => {
    const home = homeWithEnvironments();
    const remote = await runUx(['exec', '--env', 'dev', '--', WHERE_AM_I], home);
    expect(remote.status).toBe(0);
    expect(remote.stdout).toContain('where=dev');
    const local = await runUx(['exec', '--', WHERE_AM_I], home);
    expect(local.status).toBe(0);
    expect(local.stdout).toContain('where=here');
  });

  it('at a terminal, streams the remote command, attaches, and ends with its exit code', async () => {
    const home = homeWithEnvironments();
    const ux = await startUxInTerminal(
      ['exec', '--env', 'dev', '--tty', '--', `${WHERE_AM_I}; read answer; echo "got-$answer"; exit 3`],
      home,
    );
    await ux.waitFor('where=dev');
    await ux.type('hi\r');
    await ux.waitFor('got-hi');
    await ux.waitFor(/exited with code 3 after/);
    expect(await ux.exitCode()).toBe(3);
  });

  it('apply_patch in a remote environment runs there, from the server’s helpers, under its sandbox', async () => {
    const home = homeWithEnvironments();
    writeFileSync(join(home.workspace, 'a.txt'), 'one\n');
    const patch = `apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\nEOF\n`;
    const result = await runUx(['exec', '--env', 'dev', '--', patch], home);
    expect(result.stdout).toContain('Success. Updated the following files:\nM a.txt');
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('ONE\n');
    // Outside the workspace, the server's sandbox refuses the write.
    const outside = `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ../../escape.txt\n+x\n*** End Patch\nEOF\n`;
    const refused = await runUx(
      [
        'exec',
        '--env',
        'dev',
        '-c',
        'sandbox_workspace_write.exclude_slash_tmp=true',
        '-c',
        'sandbox_workspace_write.exclude_tmpdir_env_var=true',
        '--',
        outside,
      ],
      home,
    );
    expect(refused.stdout).toMatch(/read-only file system/i);
  });

  it('default_environment decides where commands run', async () => {
    const home = homeWithEnvironments('default_environment = "dev"\n');
    const result = await runUx(['exec', '--', WHERE_AM_I], home);
    expect(result.stdout).toContain('where=dev');
  });

  it('an unknown --env is a usage error naming the known ones', async () => {
    const home = homeWithEnvironments();
    const result = await runUx(['exec', '--env', 'bxo', '--', 'true'], home);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      'unknown environment "bxo" (did you mean "box"?); environments: local, box, dev',
    );
  });

  it('a token variable that is not set says which one, and runs nothing', async () => {
    const home = homeWithEnvironments();
    delete home.env.BOX_TOKEN;
    const result = await runUx(['exec', '--env', 'box', '--', 'echo should-not-run'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('cannot reach environment "box": its token is read from $BOX_TOKEN');
    expect(result.stdout).not.toContain('should-not-run\n');
  });

  it('a wrong token is refused by the server, with the reason', async () => {
    const home = homeWithEnvironments();
    home.env.BOX_TOKEN = 'wrong';
    const result = await runUx(['exec', '--env', 'box', '--', 'echo should-not-run'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('the server refused the capability token');
  });
});

describe('ux doctor with environments', () => {
  it('checks each environment: reachable, which server, sandboxes', async () => {
    const home = homeWithEnvironments();
    const result = await runUx(['doctor'], home);
    expect(result.stdout).toMatch(/ok\s+environments\s+local, box, dev; commands run in local/);
    expect(result.stdout).toMatch(
      /ok\s+environment box\s+reached through ws:\/\/127\.0\.0\.1:\d+ with the token in \$BOX_TOKEN: executor /,
    );
    expect(result.stdout).toMatch(
      /ok\s+environment dev\s+reached through the command .*it applies sandboxes/,
    );
  });

  it('says how to fix an environment it cannot reach', async () => {
    const home = makeHome({
      config: '[environments.gone]\nurl = "ws://127.0.0.1:9"\n',
    });
    const result = await runUx(['doctor'], home);
    expect(result.stdout).toMatch(
      /warn\s+environment gone\s+cannot be used: cannot reach environment "gone"/,
    );
    expect(result.stdout).toContain(
      'fix: start `ux exec-server --listen ws://IP:PORT --ws-token-file FILE` on that host',
    );
  });
});

describe('ux mcp --env', () => {
  const connect = (home: UxHome, args: string[]) => connectMcp(home, args);

  const text = (result: unknown) =>
    ((result as { content: { text: string }[] }).content ?? []).map((part) => part.text).join('');

  it('offers environment_id, runs in the --env environment by default and elsewhere when asked', async () => {
    const home = homeWithEnvironments();
    const client = await connect(home, ['--env', 'dev']);
    const { tools } = await client.listTools();
    const exec = tools.find((tool) => tool.name === 'exec_command')!;
    expect(Object.keys((exec.inputSchema as { properties: object }).properties)).toContain('environment_id');
    const byDefault = text(await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } }));
    expect(byDefault).toContain('where=dev');
    const onBox = text(
      await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I, environment_id: 'box' } }),
    );
    expect(onBox).toContain('where=box');
    const here = text(
      await client.callTool({
        name: 'exec_command',
        arguments: { cmd: WHERE_AM_I, environment_id: 'local' },
      }),
    );
    expect(here).toContain('where=here');
    const unknown = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'true', environment_id: 'nope' },
    });
    expect(text(unknown)).toContain('unknown environment_id "nope"; known environments: local, box, dev');
  });

  it('a server killed mid-session ends the session with the reason, and the next call reconnects', async () => {
    const home = homeWithEnvironments();
    const dir = makeHome().home;
    const client = await connect(home, ['--env', 'dev', '--sandbox', 'danger-full-access']);
    const started = text(
      await client.callTool({
        name: 'exec_command',
        arguments: {
          cmd: `echo $PPID > ${dir}/server; echo $$ > ${dir}/shell; exec sleep 300`,
          yield_time_ms: 1000,
        },
      }),
    );
    const sessionId = Number(/Process running with session ID (\d+)/.exec(started)?.[1]);
    expect(sessionId).toBeGreaterThan(0);
    const serverPid = Number(readFileSync(join(dir, 'server'), 'utf8'));
    const shellPid = Number(readFileSync(join(dir, 'shell'), 'utf8'));
    process.kill(serverPid, 'SIGKILL');
    const polled = text(
      await client.callTool({
        name: 'write_stdin',
        arguments: { session_id: sessionId, yield_time_ms: 5000 },
      }),
    );
    expect(polled).toContain('environment "dev" disconnected');
    expect(polled).toContain('Process exited with code -1');
    expect(await waitUntilDead(shellPid, 5000)).toBe(true);
    const again = text(await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } }));
    expect(again).toContain('where=dev');
  });
});
