// A host outside the allow list is a question to the person (the `ux exec` terminal prompt, the MCP
// client's elicitation), asked once per host, and an answer for the session is not asked again.
// Through the shipped `ux`, with the default sandbox (bubblewrap) and the session's real proxy; the
// test's names reach its own 127.0.0.1 server through UX_NETWORK_PROXY_HOSTS.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, runUx, startUxInTerminal, warmUpTerminalSpawner } from './cli-harness.js';
import { CURL, httpServer, type NetworkHome, networkHome, proxyDirectories } from './network-harness.js';

await warmUpTerminalSpawner();
useLeakCheck();

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** `ux exec` on a terminal, allowed `allowed.test` only, under an approval policy. */
const execOnTerminal = (home: NetworkHome, approval: 'on-request' | 'never', script: string) =>
  startUxInTerminal(['exec', '--approval', approval, '--allow-domain', 'allowed.test', '--', script], home);

describe('ux exec on a terminal: a host outside the list', () => {
  it('asks once; allowed for the session, the second request goes through without asking', async () => {
    const server = await httpServer();
    const home = networkHome();
    const url = server.url('other.test');
    const ux = await execOnTerminal(home, 'on-request', `${CURL} ${url} && ${CURL} ${url} && echo BOTH-DONE`);
    const question = await ux.waitFor('(Ctrl-C aborts): ');
    expect(question).toContain(`a sandboxed command wants to reach other.test:${server.port}; allow it?`);
    expect(question).toContain(`[a] allow other.test for this session`);
    await ux.type('a');
    await ux.waitFor('BOTH-DONE');
    expect(await ux.exitCode()).toBe(0);
    expect(occurrences(ux.screen, 'wants to reach')).toBe(1);
    expect(server.hosts).toEqual([`other.test:${server.port}`, `other.test:${server.port}`]);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('denied, the command gets the refusal in its own output', async () => {
    const server = await httpServer();
    const home = networkHome();
    const ux = await execOnTerminal(
      home,
      'on-request',
      `${CURL} ${server.url('other.test')}; echo; echo CURL-ENDED`,
    );
    await ux.waitFor('(Ctrl-C aborts): ');
    await ux.type('n');
    await ux.waitFor('CURL-ENDED');
    expect(ux.screen).toContain('ux: network access to "other.test" was refused when approval was asked');
    expect(await ux.exitCode()).toBe(0);
    expect(server.hosts).toEqual([]);
  });

  it('under approval policy never, nobody is asked and the host is refused', async () => {
    const server = await httpServer();
    const home = networkHome();
    const ux = await execOnTerminal(
      home,
      'never',
      `${CURL} ${server.url('other.test')}; echo; echo CURL-ENDED`,
    );
    await ux.waitFor('CURL-ENDED');
    expect(ux.screen).not.toContain('wants to reach');
    expect(ux.screen).toContain(
      'ux: network access to "other.test" is not allowed by the sandbox\'s network policy (it is not in network.allow); add it to network.allow',
    );
    expect(await ux.exitCode()).toBe(0);
    expect(server.hosts).toEqual([]);
  });
});

async function mcpWithElicitation(home: NetworkHome, answer: () => ElicitResult | Promise<ElicitResult>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--approval', 'on-request', '--allow-domain', 'allowed.test'],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'ux-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  const asked: string[] = [];
  const offered: string[][] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as unknown as {
      message: string;
      requestedSchema: { properties: { decision: { oneOf: { title: string }[] } } };
    };
    asked.push(params.message);
    offered.push(params.requestedSchema.properties.decision.oneOf.map((choice) => choice.title));
    return answer();
  });
  await client.connect(transport);
  onTestFinished(() => client.close());
  const run = async (cmd: string, yieldTimeMs = 10_000) => {
    const result = await client.callTool({
      name: 'exec_command',
      arguments: { cmd, yield_time_ms: yieldTimeMs },
    });
    return ((result.content as { text: string }[]) ?? []).map((part) => part.text).join('');
  };
  return { client, asked, offered, run };
}

describe('ux mcp: a host outside the list', () => {
  it('is one elicitation; allowed for the session, later commands reach it without asking', async () => {
    const server = await httpServer();
    const home = networkHome();
    const { asked, offered, run } = await mcpWithElicitation(home, () => ({
      action: 'accept',
      content: { decision: 'approve_for_session' },
    }));
    const url = server.url('other.test');
    expect(await run(`${CURL} ${url}`)).toContain(`hello from other.test:${server.port}`);
    expect(await run(`${CURL} ${url}`)).toContain(`hello from other.test:${server.port}`);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`a sandboxed command wants to reach other.test:${server.port}; allow it?`);
    expect(offered[0]).toEqual([
      'Allow this connection',
      'Allow other.test for this session',
      'Deny other.test for this session',
      'Deny this connection',
      'Abort (deny, and ask no more about this host)',
    ]);
    expect(server.hosts).toHaveLength(2);
  });

  it('denied for the session: the refusal, and no second question', async () => {
    const server = await httpServer();
    const home = networkHome();
    const { asked, run } = await mcpWithElicitation(home, () => ({
      action: 'accept',
      content: { decision: 'deny_for_session' },
    }));
    const url = server.url('other.test');
    const refused =
      'ux: network access to "other.test" was refused when approval was asked, for the rest of this session';
    expect(await run(`${CURL} ${url}; echo`)).toContain(refused);
    expect(await run(`${CURL} ${url}; echo`)).toContain(refused);
    expect(asked).toHaveLength(1);
    expect(server.hosts).toEqual([]);
  });

  it('stops the yield clock while the question is open: a slow answer still gets the whole result', async () => {
    const server = await httpServer();
    const home = networkHome();
    const { asked, run } = await mcpWithElicitation(home, async () => {
      // Longer than the call's yield time: without the pause the call would return a session id.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { action: 'accept', content: { decision: 'approve' } };
    });
    const receipt = await run(`${CURL} ${server.url('other.test')}`, 500);
    expect(asked).toHaveLength(1);
    expect(receipt).toContain('Process exited with code 0');
    expect(receipt).not.toContain('Process running with session ID');
    expect(receipt).toContain(`hello from other.test:${server.port}`);
  });
});

describe('ux mcp under a requirements cap without ask_unknown = false', () => {
  it('asks only about hosts inside the cap; one outside it is refused and nobody is asked', async () => {
    const server = await httpServer();
    const home = networkHome({ requirements: '[network]\nallow = ["allowed.test", "*.corp.test"]\n' });
    const { asked, run } = await mcpWithElicitation(home, () => ({
      action: 'accept',
      content: { decision: 'approve_for_session' },
    }));
    const outside = await run(`${CURL} ${server.url('other.test')}; echo`);
    expect(outside).toContain(
      'ux: network access to "other.test" is not allowed by the sandbox\'s network policy: it is outside the network.allow list an administrator pinned in the requirements, so it cannot be approved here',
    );
    expect(asked).toEqual([]);
    const inside = await run(`${CURL} ${server.url('build.corp.test')}`);
    expect(inside).toContain(`hello from build.corp.test:${server.port}`);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`wants to reach build.corp.test:${server.port}`);
    expect(server.hosts).toEqual([`build.corp.test:${server.port}`]);
  });
});

describe('the automatic reviewer answers network questions', () => {
  it('gets the host as a question and its answer lets the connection through; a refusal says who refused', async () => {
    const server = await httpServer();
    const home = networkHome();
    const questions = join(home.home, 'questions.jsonl');
    const reviewer = join(home.home, 'reviewer.sh');
    // Allows other.test, refuses anything else; records each question as one line.
    writeFileSync(
      reviewer,
      `#!/bin/sh\nq=$(cat)\nprintf '%s\\n' "$q" >> '${questions}'\ncase "$q" in *'"other.test"'*) echo '{"decision":"allow"}';; *) echo '{"decision":"deny","message":"not this host"}';; esac\n`,
    );
    chmodSync(reviewer, 0o755);
    writeFileSync(
      home.config,
      `approval_policy = "on-request"\napprovals_reviewer = "auto_review"\n[auto_review]\ncommand = ["${reviewer}"]\ntimeout = 20\n`,
    );
    const result = await runUx(
      [
        'exec',
        '--allow-domain',
        'allowed.test',
        '--',
        `${CURL} ${server.url('other.test')}; ${CURL} ${server.url('denied.test')}; echo; echo END`,
      ],
      home,
    );
    expect(result.stdout).toContain(`hello from other.test:${server.port}`);
    expect(result.stdout).toContain(
      'ux: network access to "denied.test" was refused when approval was asked',
    );
    expect(result.stdout).toContain('END');
    const asked = readFileSync(questions, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(asked).toHaveLength(2);
    expect(JSON.stringify(asked[0])).toContain(`"host":"other.test"`);
    expect(JSON.stringify(asked[1])).toContain(`"host":"denied.test"`);
    expect(server.hosts).toEqual([`other.test:${server.port}`]);
    expect(proxyDirectories(home)).toEqual([]);
  });
});

describe('ux mcp without elicitation: a host outside the list waits in the approvals inbox', () => {
  it('deny-session from ux approvals answer refuses it for the session; the yield clock stands still meanwhile', async () => {
    const server = await httpServer();
    const home = networkHome();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--approval', 'on-request', '--allow-domain', 'allowed.test'],
      cwd: home.workspace,
      env: home.env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'ux-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    onTestFinished(() => client.close());
    const url = server.url('other.test');
    // A yield time shorter than the wait for the answer: the call still returns the whole result.
    const call = client.callTool({
      name: 'exec_command',
      arguments: { cmd: `${CURL} ${url}; echo; echo CURL-ENDED`, yield_time_ms: 250 },
    });
    let question: { id: string; pid: number; kind: string; headline: string } | undefined;
    while (!question) {
      const listed = await runUx(['approvals', '--json'], home);
      question = (
        JSON.parse(listed.stdout) as {
          approvals: { id: string; pid: number; kind: string; headline: string }[];
        }
      ).approvals.find((approval) => approval.pid === transport.pid);
      if (!question) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(question.kind).toBe('network_host');
    expect(question.headline).toBe(`a sandboxed command wants to reach other.test:${server.port}; allow it?`);
    // Longer than the yield time before the answer comes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const answered = await runUx(['approvals', 'answer', question.id, 'deny-session'], home);
    expect(answered.stdout).toBe(`${question.id}: deny other.test for this session\n`);
    const text = ((await call).content as { text: string }[]).map((part) => part.text).join('');
    expect(text).toContain('CURL-ENDED');
    expect(text).toContain(
      'ux: network access to "other.test" was refused when approval was asked, for the rest of this session',
    );
    expect(server.hosts).toEqual([]);
  });
});
