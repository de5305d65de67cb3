// Test support: real `ux exec-server` processes (this package's test server, `src/exec-server-bin.ts`, with
// the bwrap backend) reached over stdio and over WebSocket with a capability token, as remote environments
// of a door.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  connectWebSocketExecServer,
  createExecServerSandbox,
  createExecServerSpawner,
  type ExecServerSpawner,
  spawnStdioExecServer,
} from '@ux/exec-server-client';
import type { SandboxBackend } from '@ux/protocol';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { type DoorOptions, makeDoor, spawner } from '../support/door.js';
import { SERVER_BIN } from '../support/exec-server-bin.js';

export interface TestEnvironment {
  spawner: ExecServerSpawner;
  sandbox: SandboxBackend;
}

let sharedServerHome: string | undefined;

/**
 * A server's environment: this process's, with `home` as HOME (default one temporary HOME shared by
 * the servers of a test, removed when it finishes) and without the variables that name start-up files
 * (zsh's ZDOTDIR, bash's BASH_ENV, sh's ENV). Remote commands build their environment from the
 * server's, so a server must never pass on this machine's HOME: its login files (a pyenv rehash lock
 * once made each of them wait 60 s) would decide the tests' output and timing.
 */
export function serverEnvironment(home?: string): NodeJS.ProcessEnv {
  if (home === undefined) {
    if (sharedServerHome === undefined) {
      const made = mkdtempSync(join(tmpdir(), 'ux-env-home-'));
      sharedServerHome = made;
      // Removed with the test: a process `exit` handler never runs in vitest's worker threads, which
      // left one directory per test file in /tmp.
      onTestFinished(() => {
        rmSync(made, { recursive: true, force: true });
        sharedServerHome = undefined;
      });
    }
    home = sharedServerHome;
  }
  const { ZDOTDIR: _zdotdir, BASH_ENV: _bashEnv, ENV: _env, ...inherited } = process.env;
  return { ...inherited, HOME: home };
}

/**
 * A remote environment whose server is a child process speaking the protocol on stdio. `env` is the
 * server's environment (default `serverEnvironment()`): remote commands build theirs from it.
 */
export function stdioEnvironment(
  name: string,
  serverArgs: string[] = [],
  env?: NodeJS.ProcessEnv,
): TestEnvironment {
  const spawner = createExecServerSpawner({
    name: `environment "${name}"`,
    connect: () =>
      spawnStdioExecServer({
        command: process.execPath,
        args: [SERVER_BIN, '--listen', 'stdio', ...serverArgs],
        env: env ?? serverEnvironment(),
      }),
  });
  return { spawner, sandbox: createExecServerSandbox(spawner) };
}

export interface WebSocketServer {
  url: string;
  token: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `ux exec-server --listen ws://127.0.0.1:0` with a token file; resolves once it prints its URL. `env`
 * is the server's environment (default `serverEnvironment()`).
 */
export async function startWebSocketServer(
  extra: string[] = [],
  env?: NodeJS.ProcessEnv,
): Promise<WebSocketServer> {
  // Made here, not with tempDir: servers start in beforeAll, outside any test.
  const dir = mkdtempSync(join(tmpdir(), 'ux-env-ws-'));
  const token = `token-${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(dir, 'token'), `${token}\n`, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [SERVER_BIN, '--listen', 'ws://127.0.0.1:0', '--ws-token-file', join(dir, 'token'), ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? serverEnvironment() },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      seen += text;
      const line = /^(ws:\/\/\S+)\n/.exec(seen);
      if (line) resolve(line[1]!);
    });
    void exited.then(() => reject(new Error(`the server exited before listening: ${stderr}`)));
  });
  return {
    url,
    token,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A remote environment reached over WebSocket with `token`. */
export function webSocketEnvironment(name: string, url: string, token: string): TestEnvironment {
  const spawner = createExecServerSpawner({
    name: `environment "${name}"`,
    connect: () => connectWebSocketExecServer({ url, token }),
  });
  return { spawner, sandbox: createExecServerSandbox(spawner) };
}

export interface ThreeEnvironments {
  readonly box: TestEnvironment;
  readonly dev: TestEnvironment;
  readonly server: WebSocketServer;
  /** The servers' HOME. */
  readonly home: string;
  /** A door with `local`, `box` (WebSocket with a token) and `dev` (stdio). */
  door(options?: DoorOptions): ReturnType<typeof makeDoor>;
}

/**
 * For a test file: `box`, a `ux exec-server` over WebSocket with a token, and `dev`, one over stdio,
 * started once (with a HOME of their own: remote commands take their variables from the server, and
 * must not read this machine's login files), ended after the file; plus the leak check, with the local
 * spawner's reaper started before its baseline.
 */
export function useThreeEnvironments(): ThreeEnvironments {
  let box: TestEnvironment | undefined;
  let dev: TestEnvironment | undefined;
  let server: WebSocketServer | undefined;
  let home: string | undefined;
  beforeAll(async () => {
    await warmUpSpawner(spawner);
  });
  useLeakCheck(5_000);
  beforeAll(async () => {
    // Made here, not with tempDir: this runs outside any test.
    home = mkdtempSync(join(tmpdir(), 'ux-env-home-'));
    const env = serverEnvironment(home);
    server = await startWebSocketServer([], env);
    box = webSocketEnvironment('box', server.url, server.token);
    dev = stdioEnvironment('dev', [], env);
  });
  afterAll(async () => {
    await box?.spawner.close();
    await dev?.spawner.close();
    await server?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the environments start in beforeAll');
    return value;
  };
  return {
    get box() {
      return started(box);
    },
    get dev() {
      return started(dev);
    },
    get server() {
      return started(server);
    },
    get home() {
      return started(home);
    },
    door(options: DoorOptions = {}) {
      const b = started(box);
      const d = started(dev);
      return makeDoor({
        ...options,
        orchestrator: { environments: { box: b.sandbox, dev: d.sandbox }, ...options.orchestrator },
        door: {
          environments: { box: { spawner: b.spawner }, dev: { spawner: d.spawner } },
          ...options.door,
        },
      });
    },
  };
}
