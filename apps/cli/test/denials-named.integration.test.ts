// What a model reads when the sandbox blocks a command, through the shipped `ux mcp` and the MCP SDK's
// own client: the structured result (what Codex and Claude Code pass on) and the text (what Gemini CLI
// passes on) both name the denial and say how to go on, late as well as early, and never blame the
// sandbox for what the policy allowed. Real bubblewrap, the session's real network proxy.
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { BIN, connectMcp, makeHome, type UxHome } from './cli-harness.js';
import { CURL, httpServer, networkHome } from './network-harness.js';

useLeakCheck();

const PYTHON = ['/usr/bin/python3', '/usr/local/bin/python3'].find((path) => existsSync(path));

interface Result {
  structured: Record<string, unknown>;
  text: string;
  isError: boolean;
}

async function session(home: UxHome, args: string[] = []) {
  const client = await connectMcp(home, args);
  return async (cmd: string, extra: Record<string, unknown> = {}): Promise<Result> => {
    const result = await client.callTool(
      { name: 'exec_command', arguments: { cmd, yield_time_ms: 10_000, ...extra } },
      undefined,
      { timeout: 60_000 },
    );
    const text = (result.content as { text: string }[]).map((part) => part.text).join('');
    expect(result.structuredContent, text).toBeDefined();
    return {
      structured: result.structuredContent as Record<string, unknown>,
      text,
      isError: result.isError === true,
    };
  };
}

type Denial = { kind: string; message: string; path?: string; host?: string; reason?: string };
const denialOf = (result: Result) => result.structured.denial as Denial | undefined;

/** The structured denial and the text agree: kind named, the text carries the message and the next step. */
function expectNamed(result: Result, kind: string): Denial {
  const denial = denialOf(result);
  expect(denial, result.text).toBeDefined();
  expect(denial!.kind, result.text).toBe(kind);
  expect(result.structured.sandbox_denied).toBe(true);
  expect(result.structured.status).toBe('exited');
  expect(result.text).toContain(denial!.message);
  const next = result.structured.next_step;
  expect(typeof next, JSON.stringify(result.structured)).toBe('string');
  expect(result.text).toContain(next as string);
  return denial!;
}

describe('ux mcp names what the sandbox blocked, in the structured result and the text', () => {
  it('a write outside the writable places: the path, and what to do', async () => {
    const exec = await session(makeHome());
    const result = await exec('touch /etc/ux-denied-probe');
    expect(result.structured.exit_code).toBe(1);
    const denial = expectNamed(result, 'file_write');
    expect(denial.path).toBe('/etc/ux-denied-probe');
    expect(existsSync('/etc/ux-denied-probe')).toBe(false);
  });

  it('a write into a protected name inside the workspace, caught after the early window', async () => {
    const home = makeHome();
    const exec = await session(home);
    await exec('git init -q .');
    // The sleep takes the failure past the early-exit window: a late denial is named too.
    const result = await exec('sleep 0.5; echo "[core]" >> .git/config');
    const denial = expectNamed(result, 'file_write');
    expect(denial.path).toBe(join(home.workspace, '.git/config'));
  });

  it('a listening socket with the network off is named as such, with how a server gets the network', async () => {
    const exec = await session(makeHome());
    const result = await exec(`node -e "require('net').createServer().listen(0, '127.0.0.1')"`);
    expect(result.structured.exit_code).not.toBe(0);
    expectNamed(result, 'listen');
    expect(result.structured.next_step).toMatch(/network/);
  });

  it.runIf(PYTHON)('a socket Python cannot even create is named as the network being off', async () => {
    const exec = await session(makeHome());
    const result = await exec(`${PYTHON} -c "import socket; socket.socket()"`);
    const denial = expectNamed(result, 'network');
    expect(denial.message).toMatch(/network socket.*network is off/);
  });

  it('a name lookup with the network off is the sandbox’s; with the network on it is not', async () => {
    const off = await session(makeHome());
    const blocked = await off(`${CURL} https://example.com`);
    const denial = expectNamed(blocked, 'dns');
    expect(denial.host).toBe('example.com');

    const on = await session(makeHome(), ['--network']);
    const failed = await on(`${CURL} https://ux-no-such-host.invalid`);
    expect(failed.structured.exit_code).not.toBe(0);
    expect(denialOf(failed)).toBeUndefined();
    expect(failed.structured.sandbox_denied).toBeUndefined();
  });

  it('a host outside the allow list: the host and the reason, not just a 403', async () => {
    const server = await httpServer();
    const home = networkHome();
    // approvals_via = "client": nobody is asked about the host (the default would ask the inbox).
    const exec = await session(home, ['--allow-domain', 'allowed.test', '-c', 'approvals_via="client"']);
    const allowed = await exec(`${CURL} ${server.url('allowed.test')}`);
    expect(allowed.structured.exit_code).toBe(0);
    expect(denialOf(allowed)).toBeUndefined();

    const refused = await exec(`${CURL} ${server.url('denied.test')}`);
    const denial = expectNamed(refused, 'proxy');
    expect(denial.host).toBe('denied.test');
    expect(denial.reason).toBeDefined();
    expect(server.hosts).not.toContain(`denied.test:${server.port}`);
  });

  it('a permission error the policy did not cause (a script without its execute bit) is not blamed on the sandbox', async () => {
    const home = makeHome();
    writeFileSync(join(home.workspace, 'build.sh'), 'echo built > out.txt\n');
    chmodSync(join(home.workspace, 'build.sh'), 0o644);
    const exec = await session(home);
    const result = await exec('./build.sh');
    expect(result.structured.exit_code).toBe(126);
    expect(result.text).toMatch(/Permission denied/);
    expect(denialOf(result)).toBeUndefined();
    expect(result.structured.sandbox_denied).toBeUndefined();
    expect(result.text).not.toMatch(/sandbox denied|blocked by the sandbox/i);
  });

  it('on a remote environment (a ux exec-server over stdio): a write outside its writable places, early and late', async () => {
    const home = makeHome({
      config: `[environments.dev]
command = [${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}, "exec-server", "--listen", "stdio"]
`,
    });
    const exec = await session(home);
    for (const cmd of ['touch /etc/ux-remote-probe', 'sleep 0.5; touch /etc/ux-remote-probe']) {
      const result = await exec(cmd, { environment_id: 'dev' });
      const denial = expectNamed(result, 'file_write');
      expect(denial.path).toBe('/etc/ux-remote-probe');
      expect(denial.message).toMatch(/exec-server/);
    }
    expect(existsSync('/etc/ux-remote-probe')).toBe(false);
  });
});
