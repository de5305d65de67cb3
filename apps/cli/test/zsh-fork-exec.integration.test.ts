// ZshFork through what users run: `ux exec` with pipes and in a real terminal, `ux mcp` under the MCP
// SDK's client, `ux features explain` and `ux doctor`; the real patched zsh, broker and bwrap.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { useLeakCheck, zshForkPath } from '@ux/test-utils';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  makeHome,
  runUx,
  startUxInTerminal,
  type UxHome,
  warmUpTerminalSpawner,
} from './cli-harness.js';

let zsh: string;
beforeAll(async () => {
  zsh = zshForkPath();
  await warmUpTerminalSpawner();
});
useLeakCheck();

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const FORK_FLAGS = '[features]\nshell_zsh_fork = true\nunified_exec_zsh_fork = true\n';

/** A UX_HOME with the zsh fork on (the tests' patched zsh) and the given rules. */
function forkHome(rules: string, options: { composed?: boolean; zshPath?: string | null } = {}): UxHome {
  const flags = options.composed === false ? '[features]\nshell_zsh_fork = true\n' : FORK_FLAGS;
  const path = options.zshPath === undefined ? zsh : options.zshPath;
  const home = makeHome({
    config: `${flags}${path === null ? '' : `[zsh_fork]\nzsh_path = "${path}"\n`}`,
  });
  mkdirSync(join(home.home, 'rules'));
  writeFileSync(join(home.home, 'rules', 'test.rules'), rules);
  return home;
}

describe('ux exec through the zsh fork', () => {
  it('refuses an rm hidden in a variable and goes on; without the fork the file is gone', async () => {
    const rules = 'prefix_rule(pattern=["rm"], decision="forbidden")\n';
    const home = forkHome(rules);
    writeFileSync(join(home.workspace, 'x'), 'keep');
    const result = await runUx(['exec', '--', 'R=rm; echo a; $R -f x; echo b'], home);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /Output:\na\nExecution denied: Execution forbidden by policy: .*rm -f x.*\nb\n/,
    );
    expect(existsSync(join(home.workspace, 'x'))).toBe(true);

    const direct = makeHome();
    mkdirSync(join(direct.home, 'rules'));
    writeFileSync(join(direct.home, 'rules', 'test.rules'), rules);
    writeFileSync(join(direct.workspace, 'x'), 'gone');
    const plain = await runUx(['exec', '--', 'R=rm; echo a; $R -f x; echo b'], direct);
    expect(plain.stdout).toContain('Output:\na\nb\n');
    expect(existsSync(join(direct.workspace, 'x'))).toBe(false);
  });

  it('asks at the terminal for each intercepted program, after the output so far, naming the command; x refuses it and ends the command', async () => {
    const home = forkHome('prefix_rule(pattern=["touch"], decision="prompt")\n');
    // The markers are computed, so the question quoting the script does not show what its output shows.
    const script = 'T=touch; echo first-$((0+1)); $T one; echo second-$((1+1)); $T two; echo never-$((2+1))';
    const session = await startUxInTerminal(['exec', '--', script], home);
    await session.waitFor('a running command wants to start this program; allow it?');
    await session.waitFor('program: touch one');
    await session.waitFor(`run by:  ${script}`);
    await session.waitFor('Press y/x');
    // The script's earlier output is on the screen before the question.
    const first = session.screen;
    expect(first.indexOf('first-1')).toBeGreaterThanOrEqual(0);
    expect(first.indexOf('first-1')).toBeLessThan(first.indexOf('a running command wants'));
    expect(first).toContain('[x] abort (refuse it and end the command)');
    await session.type('y');
    await session.waitFor('program: touch two');
    await session.waitFor('Press y/x');
    const second = session.screen;
    expect(second.indexOf('second-2')).toBeGreaterThan(first.length - 1);
    expect(second.indexOf('second-2')).toBeLessThan(second.lastIndexOf('program: touch two'));
    await session.type('x');
    await session.waitFor('[ux: aborted at the question: the program was refused and the command was ended');
    expect(await session.exitCode()).toBe(130);
    // Nothing after the refused program ran, and each line was shown once.
    expect(session.screen).not.toContain('never-3');
    expect(session.screen).not.toContain('Execution denied');
    expect(session.screen.split('first-1').length - 1).toBe(1);
    expect(session.screen.split('second-2').length - 1).toBe(1);
    expect(existsSync(join(home.workspace, 'one'))).toBe(true);
    expect(existsSync(join(home.workspace, 'two'))).toBe(false);
  });

  it('shell_zsh_fork alone (one shot): the output so far comes before the question, and x ends the command', async () => {
    const home = forkHome('prefix_rule(pattern=["touch"], decision="prompt")\n', { composed: false });
    const session = await startUxInTerminal(
      ['exec', '--', 'T=touch; echo first-$((0+1)); $T one; echo never-$((1+1))'],
      home,
    );
    await session.waitFor('program: touch one');
    await session.waitFor('Press y/x');
    const screen = session.screen;
    expect(screen.indexOf('first-1')).toBeGreaterThanOrEqual(0);
    expect(screen.indexOf('first-1')).toBeLessThan(screen.indexOf('a running command wants'));
    await session.type('x');
    await session.waitFor('[ux: aborted at the question: the program was refused and the command was ended]');
    expect(await session.exitCode()).toBe(130);
    expect(session.screen).not.toContain('never-2');
    expect(existsSync(join(home.workspace, 'one'))).toBe(false);
  });

  it('says how to build the fork instead of running commands direct when it is missing', async () => {
    const home = forkHome('', { zshPath: null });
    const result = await runUx(['exec', '--', 'echo hi'], home);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'ux: the zsh fork cannot start: no patched zsh: build it with `ux zsh-fork build`, or set zsh_fork.zsh_path to an absolute path',
    );
    expect(result.stdout).toBe('');
    const doctor = await runUx(['doctor'], home);
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toMatch(/^fail +zsh fork +the flags ask for it, and it cannot start/m);
  });

  it('shell_zsh_fork alone runs through shell_command and the fork, with the same rules', async () => {
    const home = forkHome('prefix_rule(pattern=["rm"], decision="forbidden")\n', { composed: false });
    writeFileSync(join(home.workspace, 'x'), 'keep');
    const result = await runUx(['exec', '--', 'R=rm; $R -f x; echo after'], home);
    expect(result.stdout).toMatch(/^Exit code: 0\n/);
    expect(result.stdout).toContain('Execution denied');
    expect(result.stdout).toContain('after');
    expect(existsSync(join(home.workspace, 'x'))).toBe(true);
    const explained = await runUx(['features', 'explain'], home);
    expect(explained.stdout).toContain('tools: shell_command, run through the zsh fork');
    expect(explained.stdout).toContain(`shell: zsh fork (${zsh}`);
  });
});

describe('a remote environment in a zsh-fork session', () => {
  it('runs direct there (bash, no interception), while local commands still go through the fork', async () => {
    const home = forkHome('prefix_rule(pattern=["rm"], decision="forbidden")\n');
    writeFileSync(
      home.config,
      `${FORK_FLAGS}[zsh_fork]\nzsh_path = "${zsh}"\n[environments.dev]\ncommand = ${JSON.stringify([process.execPath, BIN, 'exec-server', '--listen', 'stdio'])}\n`,
    );
    writeFileSync(join(home.workspace, 'local-file'), 'keep');
    writeFileSync(join(home.workspace, 'remote-file'), 'gone');
    const script = (file: string) =>
      `echo "zsh=\${ZSH_VERSION:-none} bash=\${BASH_VERSION:+yes}"; R=rm; $R -f ${file}; echo after`;
    const local = await runUx(['exec', '--', script('local-file')], home);
    expect(local.stdout).toContain('zsh=5.9 bash=\n');
    expect(local.stdout).toContain('Execution denied');
    expect(existsSync(join(home.workspace, 'local-file'))).toBe(true);
    // The same script in the remote environment: the server's /bin/bash, direct; the fork's per-exec
    // checks do not reach a remote host (docs/remote.md), so the hidden rm runs there.
    const remote = await runUx(['exec', '--env', 'dev', '--', script('remote-file')], home);
    expect(remote.status).toBe(0);
    expect(remote.stdout).toContain('zsh=none bash=yes\nafter\n');
    expect(remote.stdout).not.toContain('Execution denied');
    expect(existsSync(join(home.workspace, 'remote-file'))).toBe(false);
  });
});

async function connect(home: UxHome, elicit?: (message: string) => ElicitResult) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'ux-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  const asked: string[] = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const message = (request.params as { message: string }).message;
      asked.push(message);
      return elicit(message);
    });
  }
  await client.connect(transport);
  open.push(client);
  return { client, asked };
}

const textOf = (result: unknown) =>
  ((result as { content: { text: string }[] }).content ?? []).map((part) => part.text).join('');

describe('ux mcp through the zsh fork', () => {
  it('asks the client about each intercepted program, naming it and where it runs', async () => {
    const home = forkHome('prefix_rule(pattern=["touch"], decision="prompt")\n');
    const { client, asked } = await connect(home, () => ({
      action: 'accept',
      content: { decision: 'approve' },
    }));
    const result = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'T=touch; $T made-by-mcp; echo ok' },
    });
    expect(textOf(result)).toContain('ok');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('a running command wants to start this program');
    expect(asked[0]).toContain('program: touch made-by-mcp');
    expect(asked[0]).toContain(`in: ${home.workspace}`);
    expect(existsSync(join(home.workspace, 'made-by-mcp'))).toBe(true);
    // The fork fixes the shell: the model is not offered `shell`.
    const tools = await client.listTools();
    const exec = tools.tools.find((tool) => tool.name === 'exec_command')!;
    expect(Object.keys((exec.inputSchema as { properties: object }).properties)).not.toContain('shell');
  });

  it('without elicitation, an intercepted program waits in the approvals inbox as a per-exec question', async () => {
    const home = forkHome('prefix_rule(pattern=["touch"], decision="prompt")\n');
    const { client } = await connect(home);
    const call = client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'T=touch; $T made-by-inbox; echo ok' },
    });
    type Question = {
      id: string;
      kind: string;
      headline: string;
      choices: { value: string }[];
      process: { cwd: string };
    };
    let question: Question | undefined;
    while (!question) {
      const listed = await runUx(['approvals', '--json'], home);
      question = (JSON.parse(listed.stdout) as { approvals: Question[] }).approvals.find(
        (approval) => approval.process.cwd === home.workspace,
      );
      if (!question) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(question.kind).toBe('per_exec');
    expect(question.headline).toBe('a running command wants to start this program; allow it?');
    expect(question.choices.map((choice) => choice.value)).toEqual(['approve', 'abort']);
    const answered = await runUx(['approvals', 'answer', question.id, 'approve'], home);
    expect(answered.status, answered.stderr).toBe(0);
    expect(textOf(await call)).toContain('ok');
    expect(existsSync(join(home.workspace, 'made-by-inbox'))).toBe(true);
  });

  it('serves shell_command when shell_zsh_fork is on alone', async () => {
    const home = forkHome('prefix_rule(pattern=["rm"], decision="forbidden")\n', { composed: false });
    const { client } = await connect(home);
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(['shell_command']);
    writeFileSync(join(home.workspace, 'x'), 'keep');
    const result = await client.callTool({
      name: 'shell_command',
      arguments: { command: 'R=rm; $R x; echo $?' },
    });
    expect(textOf(result)).toContain('Execution denied');
    expect(existsSync(join(home.workspace, 'x'))).toBe(true);
  });
});
