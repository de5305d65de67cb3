// The question each reviewer puts to a person, with a command whose words try to rewrite the screen:
// the terminal reviewer on a Terminal over a stream pair, the MCP reviewer through the SDK's client
// over its in-memory transport, the no-terminal reviewer's line on stderr.
import { PassThrough } from 'node:stream';
import type { ReadStream, WriteStream } from 'node:tty';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalRequest } from '@ux/protocol/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createElicitationReviewer } from './mcp-reviewer.js';
import { Terminal } from './terminal.js';
import { createNoTerminalReviewer, createTerminalReviewer } from './terminal-reviewer.js';

const OPTIONS = { ruleFile: '/home/u/.ux/rules/default.rules' };
const FORGED = 'touch x #\r\x1b[2K\x1b[1A\x1b[2K  command: ls -la';
const SHOWN = 'touch x #\\r\\e[2K\\e[1A\\e[2K  command: ls -la';

const request: ApprovalRequest = {
  call_id: 'c1',
  command: ['bash', '-lc', FORGED],
  display_command: FORGED,
  cwd: '/work',
  policy_reason: 'approval policy "untrusted": `touch x` is not a known read-only command',
  unsandboxed: 'after_denial',
  retry: false,
  proposed_execpolicy_amendment: ['touch', 'x\x1b[2J'],
  available_decisions: ['approved', 'approved_execpolicy_amendment', 'denied', 'abort'],
};

describe('the terminal reviewer', () => {
  it('prints the forged command as escapes, under a note, and the forged line never starts a line', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let screen = '';
    output.setEncoding('utf8').on('data', (text: string) => {
      screen += text;
      if (screen.includes('Press ')) setImmediate(() => input.write('n'));
    });
    const terminal = new Terminal(input as unknown as ReadStream, output as unknown as WriteStream);
    const reviewer = createTerminalReviewer(terminal, OPTIONS);
    expect(await reviewer.review(request, { signal: new AbortController().signal })).toEqual({
      type: 'denied',
    });
    // Only ux's own prompt handling may move the cursor; nothing of the command's does.
    expect(screen).not.toContain('\x1b[1A');
    expect(screen).not.toContain('\x1b[2K');
    expect(screen).not.toContain('\x1b[2J');
    expect(screen).toContain(`  command: ${SHOWN}\n`);
    expect(screen).toMatch(
      /\n {2}note: {4}the command holds control or invisible characters, shown as escapes/,
    );
    expect(screen).toContain("[p] always allow `touch 'x\\e[2J' …`");
    expect(screen).toContain('prefix_rule(pattern=["touch", "x\\u001b[2J"], decision="allow")');
    expect(screen.split('\n').filter((line) => /^\s*command: ls -la/.test(line))).toEqual([]);
  });

  it('runs beforeQuestion before the question takes the screen, and tells onAnswer the answer', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let screen = '';
    output.setEncoding('utf8').on('data', (text: string) => {
      screen += text;
      if (screen.includes('Press ')) setImmediate(() => input.write('x'));
    });
    const terminal = new Terminal(input as unknown as ReadStream, output as unknown as WriteStream);
    const answers: string[] = [];
    const reviewer = createTerminalReviewer(terminal, {
      ...OPTIONS,
      beforeQuestion: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        terminal.write('earlier output of the script\n');
      },
      onAnswer: (asked, decision) => answers.push(`${asked.approval_id}:${decision.type}`),
    });
    const perExec: ApprovalRequest = {
      ...request,
      approval_id: 'a1',
      command: ['/usr/bin/touch', 'x'],
      display_command: 'touch x',
      parent_command: 'echo hi; touch x',
      available_decisions: ['approved', 'abort'],
    };
    expect(await reviewer.review(perExec, { signal: new AbortController().signal })).toEqual({
      type: 'abort',
    });
    expect(screen.indexOf('earlier output of the script')).toBeLessThan(
      screen.indexOf('ux: a running command'),
    );
    expect(screen).toContain('  run by:  echo hi; touch x\n');
    expect(screen).toContain('[x] abort (refuse it and end the command)');
    expect(answers).toEqual(['a1:abort']);
  });

  it('without a terminal, says on stderr which command needed approval, with escapes', async () => {
    const said: string[] = [];
    const reviewer = createNoTerminalReviewer((text) => said.push(text));
    await expect(reviewer.review(request, { signal: new AbortController().signal })).rejects.toThrow(
      'stdin is not a terminal',
    );
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(new RegExp(`^ux: \`${SHOWN.replace(/[\\[\]]/g, '\\$&')}\` needs approval`));
    expect(said[0]!.slice(0, -1)).not.toMatch(/[\r\n\x1b]/);
  });
});

describe('the MCP elicitation reviewer', () => {
  it('asks with a message and choices that carry escapes, not control characters', async () => {
    const server = new Server({ name: 'ux-test-server', version: '1.0.0' }, { capabilities: {} });
    const client = new Client(
      { name: 'ux-test-client', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const asked: { message: string; titles: string[] }[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (elicit) => {
      const params = elicit.params as unknown as {
        message: string;
        requestedSchema: { properties: { decision: { oneOf: { title: string }[] } } };
      };
      asked.push({
        message: params.message,
        titles: params.requestedSchema.properties.decision.oneOf.map((choice) => choice.title),
      });
      return { action: 'decline' };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    onTestFinished(async () => {
      await client.close();
      await server.close();
    });
    const reviewer = createElicitationReviewer(server, () => {}, OPTIONS);
    expect(await reviewer.review(request, { signal: new AbortController().signal })).toEqual({
      type: 'denied',
    });
    expect(asked).toHaveLength(1);
    const { message, titles } = asked[0]!;
    expect(message).not.toMatch(/[\r\x1b]/);
    expect(message.split('\n')).toContain(`command: ${SHOWN}`);
    expect(message).toMatch(/\nnote: the command holds control or invisible characters, shown as escapes/);
    expect(titles).toContain("Always allow commands starting with: touch 'x\\e[2J'");
    for (const title of titles) expect(title).not.toMatch(/[\r\x1b]/);
  });
});
