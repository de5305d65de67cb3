// `ux mcp` spoken to on the wire, line by line: for input the MCP SDK's client cannot produce (garbage,
// over-long lines, a write that ends with end of input) and for counting answers exactly.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { onTestFinished } from 'vitest';
import { BIN, makeHome, type UxHome } from './cli-harness.js';

export type WireMessage = Record<string, unknown> & {
  id?: string | number | null;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

export class McpWire {
  readonly messages: WireMessage[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private buffer = '';

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      this.buffer += text;
      for (let newline = this.buffer.indexOf('\n'); newline >= 0; newline = this.buffer.indexOf('\n')) {
        this.messages.push(JSON.parse(this.buffer.slice(0, newline)) as WireMessage);
        this.buffer = this.buffer.slice(newline + 1);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => this.stderr.push(text));
    child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  /** Starts `ux mcp` (with `nodeArgs` for Node itself); it is killed after the test if still running. */
  static start(home: UxHome, options: { nodeArgs?: string[]; args?: string[] } = {}): McpWire {
    const child = spawn(
      process.execPath,
      [...(options.nodeArgs ?? []), BIN, 'mcp', ...(options.args ?? [])],
      {
        cwd: home.workspace,
        env: home.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const wire = new McpWire(child);
    onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await wire.exited;
      }
    });
    return wire;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Writes one message (an object, or text as it is) and a newline. */
  send(message: unknown): void {
    this.child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  /** Writes raw text (several messages, part of one). */
  write(text: string): void {
    this.child.stdin.write(text);
  }

  end(): void {
    this.child.stdin.end();
  }

  static initialize(id: number | string, capabilities: Record<string, unknown> = {}): WireMessage {
    return {
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'wire', version: '0' } },
    };
  }

  static call(id: number | string, name: string, args: unknown): WireMessage {
    return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
  }

  async waitFor(match: (message: WireMessage) => boolean, timeoutMs = 15_000): Promise<WireMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `no matching message within ${timeoutMs} ms; got:\n${this.messages.map((m) => JSON.stringify(m).slice(0, 300)).join('\n')}\nstderr: ${this.stderr.join('')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The response to request `id`. */
  answer(id: number | string, timeoutMs?: number): Promise<WireMessage> {
    return this.waitFor((m) => m.id === id && ('result' in m || 'error' in m), timeoutMs);
  }

  /** Every response with this id (a request must get exactly one). */
  answersTo(id: number | string | null): WireMessage[] {
    return this.messages.filter((m) => m.id === id && ('result' in m || 'error' in m));
  }

  /** The server's resident memory, in MiB. */
  rssMib(): number {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
    return Number(match?.[1] ?? 0) / 1024;
  }
}

/** The text of a tool result. */
export function resultText(message: WireMessage): string {
  const content = (message.result as { content?: { text: string }[] } | undefined)?.content ?? [];
  return content.map((part) => part.text).join('');
}

/**
 * `ux mcp` under the MCP SDK's own client (closed after the test), with a `call` that returns the
 * receipt's text and what the tests read from it.
 */
export async function connectMcp(home: UxHome = makeHome(), nodeArgs: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeArgs, BIN, 'mcp'],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'ux-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  onTestFinished(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
    const text = (result.content as { text: string }[]).map((part) => part.text).join('');
    return {
      result,
      text,
      structured: result.structuredContent as Record<string, unknown> | undefined,
      session: /Process running with session ID (\d+)/.exec(text)?.[1],
      exit: /Process exited with code (-?\d+)/.exec(text)?.[1],
      output: text.slice(text.indexOf('Output:\n') + 8),
    };
  };
  return { client, call, pid: transport.pid! };
}
