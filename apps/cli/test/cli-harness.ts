// Runs the built `ux` as a child process, with its own UX_HOME, HOME and requirements file; either with
// pipes (`runUx`) or inside a real terminal (`startUxInTerminal`).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ExecProcess } from '@ux/protocol';
import { isAlive } from '@ux/protocol-testing';
import { createLocalSpawner } from '@ux/spawn';
import { tempDir, warmUpSpawner } from '@ux/test-utils';
import { onTestFinished } from 'vitest';

export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'ux.cjs');

export interface UxFiles {
  config?: string;
  requirements?: string;
}

export interface UxHome {
  home: string;
  workspace: string;
  config: string;
  requirements: string;
  env: Record<string, string>;
}

/**
 * Where test homes go: outside `/tmp`, as a person's home is. Commands get a private `/tmp` of their
 * session by default, so a home under the host's `/tmp` would be out of their sight (its rc files,
 * its keys) unless it were the workspace; tests of that case make their own.
 */
export const HOME_PARENT = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();

/** A fresh UX_HOME (also HOME, so no login script of this machine speaks) and a workspace. */
export function makeHome(files: UxFiles = {}): UxHome {
  const home = realpathSync(tempDir('ux-cli-', HOME_PARENT));
  const workspace = join(home, 'workspace');
  mkdirSync(workspace);
  const config = join(home, 'config.toml');
  const requirements = join(home, 'requirements.toml');
  if (files.config !== undefined) writeFileSync(config, files.config);
  if (files.requirements !== undefined) writeFileSync(requirements, files.requirements);
  return {
    home,
    workspace,
    config,
    requirements,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      UX_HOME: home,
      UX_REQUIREMENTS: requirements,
      SHELL: '/bin/bash',
    },
  };
}

export interface UxResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `ux args…` with pipes; `input` is written to its stdin, which is then closed. */
export function runUx(
  args: string[],
  home: UxHome,
  options: { input?: string; cwd?: string; bin?: string } = {},
): Promise<UxResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
      cwd: options.cwd ?? home.workspace,
      env: home.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** `ux` in a real terminal: read what it shows, type into it. */
export class TerminalSession {
  private output = '';
  private cursor = 0;

  constructor(readonly process: ExecProcess) {
    process.onOutput((chunk) => {
      this.output += Buffer.from(chunk).toString('utf8');
    });
  }

  /** Everything shown so far. */
  get screen(): string {
    return this.output;
  }

  /** Waits until `text` appears after what earlier waits consumed; returns what came before it. */
  async waitFor(text: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rest = this.output.slice(this.cursor);
      const match =
        typeof text === 'string' ? { index: rest.indexOf(text), length: text.length } : matchOf(rest, text);
      if (match.index >= 0) {
        this.cursor += match.index + match.length;
        return rest.slice(0, match.index + match.length);
      }
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${String(text)}; the terminal shows:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  type(text: string): Promise<void> {
    return this.process.write(text);
  }

  async exitCode(timeoutMs = 15_000): Promise<number> {
    const timer = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`ux did not exit; the terminal shows:\n${this.output}`)),
        timeoutMs,
      ).unref(),
    );
    await Promise.race([this.process.exited, timer]);
    await this.process.closed;
    return this.process.exitStatus()!.exitCode;
  }
}

function matchOf(text: string, pattern: RegExp): { index: number; length: number } {
  const found = pattern.exec(text);
  return found ? { index: found.index, length: found[0].length } : { index: -1, length: 0 };
}

const spawner = createLocalSpawner();

/** Starts this file's host reaper before a leak-check baseline is taken. */
export const warmUpTerminalSpawner = () => warmUpSpawner(spawner);

export async function startUxInTerminal(args: string[], home: UxHome): Promise<TerminalSession> {
  // A failed assertion must not leave ux running in its terminal.
  onTestFinished(async () => {
    if (child.exitStatus() === undefined) await child.terminate();
    await child.closed;
  });
  const child = await spawner.spawn({
    argv: [process.execPath, BIN, ...args],
    cwd: home.workspace,
    env: { ...home.env, TERM: 'xterm' },
    tty: true,
    stdin: 'pipe',
  });
  return new TerminalSession(child);
}

/** Host pids whose command line contains `marker` (a word put into a test's script for this). */
export function pidsMatching(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) && isAlive(pid)) found.push(pid);
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/**
 * Waits until the test's command (carrying `marker`) runs: a process other than ux names it.
 * Counting every process whose command line names the marker is not enough: a child ux has just
 * forked still carries ux's own command line, and a signal sent in that moment lands on the fork, not
 * on the command (or on a ux that has not set up its handlers yet). Its name is no guide either: a
 * fork made from one of node's threads is named after the thread. So: a process whose command line
 * names the marker but not ux's own script.
 */
export async function waitForCommandRunning(marker: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const notUx = (pid: number) => {
    try {
      return !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(BIN);
    } catch {
      return false;
    }
  };
  while (!pidsMatching(marker).some(notUx)) {
    if (Date.now() > deadline) throw new Error(`no process running the script marked "${marker}" appeared`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until no process carrying `marker` is left. */
export async function expectNoneMatching(marker: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pidsMatching(marker);
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`processes still alive with "${marker}": ${left.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let markers = 0;
/** A word unique to this test run, to find a test's processes by. */
export function uniqueMarker(): string {
  return `uxmark${process.pid}x${++markers}`;
}

/**
 * The MCP SDK's own client for `ux mcp ARGS…` in `home`, not connected yet. With `elicit`, the client
 * declares elicitation and answers each question with what it returns (given the question's message).
 */
export function mcpClient(
  home: UxHome,
  args: string[] = [],
  elicit?: (message: string) => ElicitResult,
): { client: Client; transport: StdioClientTransport } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'ux-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit)
    client.setRequestHandler(ElicitRequestSchema, async (request) =>
      elicit((request.params as { message: string }).message),
    );
  return { client, transport };
}

/** `mcpClient`, connected, and closed after the test. */
export async function connectMcp(home: UxHome, args: string[] = []): Promise<Client> {
  const { client, transport } = mcpClient(home, args);
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}
