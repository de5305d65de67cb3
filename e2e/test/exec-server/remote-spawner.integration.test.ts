// The exec-server spawner of @ux/exec-server-client against this server as a real child process: the Spawner
// conformance suite over stdio and over WebSocket, and the failures a caller must see.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  connectWebSocketExecServer,
  createExecServerSandbox,
  createExecServerSpawner,
  type ExecServerSpawner,
  spawnStdioExecServer,
} from '@ux/exec-server-client';
import { type ExecProcess, SandboxUnavailableError, SpawnFailedError } from '@ux/protocol';
import { describeConformance, runToEnd, spawnerConformanceChecks, waitForOutput } from '@ux/protocol-testing';
import { encodeSandboxContext } from '@ux/protocol-utils';
import { cuttableRelay, tempDir, useLeakCheck } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { PATH, SERVER_BIN, startWebSocketServer } from './test-support.js';

useLeakCheck(5_000);

function stdioSpawner(args: string[] = [], name = 'box'): ExecServerSpawner {
  return createExecServerSpawner({
    name,
    connect: () =>
      spawnStdioExecServer({ command: process.execPath, args: [SERVER_BIN, '--listen', 'stdio', ...args] }),
  });
}

const request = { cwd: '/tmp', env: { PATH }, tty: false, stdin: 'closed' as const };

describe('over stdio', () => {
  const spawner = stdioSpawner();
  afterAll(() => spawner.close());
  describeConformance(
    'exec-server spawner (stdio)',
    spawnerConformanceChecks(() => spawner),
  );
});

describe('over WebSocket with a capability token', () => {
  let server: Awaited<ReturnType<typeof startWebSocketServer>>;
  let spawner: ExecServerSpawner;
  const dir = `/tmp/ux-es-ws-${process.pid}`;
  beforeAll(async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'conformance-token\n');
    server = await startWebSocketServer(join(dir, 'token'));
    spawner = createExecServerSpawner({
      name: 'ws-box',
      connect: () => connectWebSocketExecServer({ url: server.url, token: 'conformance-token' }),
    });
  });
  afterAll(async () => {
    await spawner.close();
    await server.stop();
    const { rmSync } = await import('node:fs');
    rmSync(dir, { recursive: true, force: true });
  });
  describeConformance(
    'exec-server spawner (WebSocket)',
    spawnerConformanceChecks(() => spawner),
  );
});

describe('failures the caller sees', () => {
  it('a server that cannot be started: SpawnFailedError, nothing run locally', async () => {
    const spawner = createExecServerSpawner({
      name: 'remote environment "box"',
      connect: () => spawnStdioExecServer({ command: '/nonexistent/ux', args: ['exec-server'] }),
    });
    const error = await spawner.spawn({ ...request, argv: ['true'] }).catch((e: unknown) => e);
    expect(SpawnFailedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'failed to start true: cannot reach remote environment "box": cannot start the exec-server `/nonexistent/ux exec-server`: spawn /nonexistent/ux ENOENT; the command was not run (ux never runs it locally instead)',
    );
  });

  it('a program that is not an exec-server: the handshake fails', async () => {
    const spawner = createExecServerSpawner({
      name: 'box',
      initializeTimeoutMs: 300,
      connect: () => spawnStdioExecServer({ command: 'sleep', args: ['30'], closeTimeoutMs: 100 }),
    });
    const error = await spawner.spawn({ ...request, argv: ['true'] }).catch((e: unknown) => e);
    expect(SpawnFailedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      'the handshake with box failed: the exec-server `sleep 30` did not answer initialize within 300 ms',
    );
    const exits = createExecServerSpawner({
      name: 'box',
      connect: () => spawnStdioExecServer({ command: 'sh', args: ['-c', 'echo broken >&2; exit 3'] }),
    });
    const exited = await exits.spawn({ ...request, argv: ['true'] }).catch((e: unknown) => e);
    expect((exited as Error).message).toContain('exited with code 3: broken');
  });

  it('a WebSocket server that refuses the token: HTTP 401 named', async () => {
    const dir = tempDir('ux-es-badtoken-');
    writeFileSync(join(dir, 'token'), 'right');
    const server = await startWebSocketServer(join(dir, 'token'));
    onTestFinished(async () => {
      await server.stop();
    });
    for (const token of ['wrong', undefined]) {
      const spawner = createExecServerSpawner({
        name: 'ws-box',
        connect: () => connectWebSocketExecServer({ url: server.url, ...(token ? { token } : {}) }),
      });
      const error = await spawner.spawn({ ...request, argv: ['true'] }).catch((e: unknown) => e);
      expect((error as Error).message).toContain(
        'answered HTTP 401: the server refused the capability token',
      );
    }
  });

  it('a server that dies under a running process: the output says so, exit -1; the next spawn reconnects', async () => {
    const spawner = stdioSpawner();
    onTestFinished(() => spawner.close());
    const victim = await spawner.spawn({
      ...request,
      argv: ['sh', '-c', 'echo started; sleep 0.2; kill -KILL $PPID; sleep 30'],
    });
    const { text, status } = await runToEnd(victim, 10_000);
    expect(text).toMatch(
      /^started\n\n\[ux: box disconnected: the exec-server `.*` was killed by SIGKILL; what became of the process there is unknown\]\n$/,
    );
    expect(status.exitCode).toBe(-1);
    const next = await spawner.spawn({ ...request, argv: ['echo', 'again'] });
    expect((await runToEnd(next)).text).toBe('again\n');
  });

  it('start errors name the command and the environment', async () => {
    const spawner = stdioSpawner();
    onTestFinished(() => spawner.close());
    const missing = await spawner.spawn({ ...request, argv: ['/nonexistent/tool'] }).catch((e: unknown) => e);
    expect((missing as Error).message).toBe(
      'failed to start /nonexistent/tool: box could not start it: no such file',
    );
  });
});

/** A WebSocket server (with `args`) behind a relay the test can cut, and a spawner that resumes. */
async function serverBehindRelay(args: string[] = []) {
  const dir = tempDir('ux-es-resume-');
  writeFileSync(join(dir, 'token'), 'resume-token\n');
  const server = await startWebSocketServer(join(dir, 'token'), args);
  onTestFinished(async () => {
    await server.stop();
  });
  const relay = await cuttableRelay(Number(new URL(server.url).port));
  const spawner = createExecServerSpawner({
    name: 'environment "box"',
    resumeWindowMs: 10_000,
    connect: () => connectWebSocketExecServer({ url: relay.url, token: 'resume-token' }),
  });
  onTestFinished(() => spawner.close());
  return { relay, spawner };
}

describe('a dropped WebSocket connection (resumeWindowMs)', () => {
  it('is resumed: the process runs on on the server, and no output is lost or repeated', async () => {
    const { relay, spawner } = await serverBehindRelay();
    const counter = await spawner.spawn({
      ...request,
      argv: ['sh', '-c', 'i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo "line $i"; sleep 0.05; done; exit 3'],
    });
    let text = '';
    counter.onOutput((data) => {
      text += Buffer.from(data).toString();
    });
    while (!text.includes('line 3\n')) await new Promise((resolve) => setTimeout(resolve, 10));
    relay.cut();
    expect((await counter.exited).exitCode).toBe(3);
    await counter.closed;
    const resumedLine =
      /\n\[ux: the connection to environment "box" was lost \(.+\) and resumed after \d+\.\d s\]\n/;
    expect(text).toMatch(resumedLine);
    // Every line once, in order: what ran while the connection was down came back from the server.
    const lines = text.replace(resumedLine, '\n').split('\n').filter(Boolean);
    expect(lines).toEqual(Array.from({ length: 30 }, (_, index) => `line ${index + 1}`));
    // The resumed connection serves new commands too.
    const next = await spawner.spawn({ ...request, argv: ['echo', 'after'] });
    expect((await runToEnd(next)).text).toBe('after\n');
  });

  it('a server that ended the processes with the connection (--on-disconnect terminate): reported lost', async () => {
    const { relay, spawner } = await serverBehindRelay(['--on-disconnect', 'terminate']);
    const sleeper = await spawner.spawn({ ...request, argv: ['sh', '-c', 'echo up; exec sleep 30'] });
    await waitForOutput(sleeper, 'up\n');
    relay.cut();
    const { text, status } = await runToEnd(sleeper, 20_000);
    expect(status.exitCode).toBe(-1);
    expect(text).toMatch(
      /\[ux: environment "box" disconnected: .*; environment "box" no longer has this session \(unknown session id .+\); what became of the process there is unknown\]\n$/,
    );
  });
});

describe('sandboxes through the exec-server', () => {
  it('the exec-server sandbox backend probes the server and runs a plan under bubblewrap there', async () => {
    const spawner = stdioSpawner();
    onTestFinished(() => spawner.close());
    const backend = createExecServerSandbox(spawner);
    expect(await backend.probe()).toEqual({ available: true });
    const workspace = tempDir('ux-es-remote-box-');
    const plan = await backend.plan({
      argv: ['sh', '-c', 'echo inside > in.txt && cat in.txt; touch /etc/ux-should-not-exist'],
      cwd: workspace,
      env: { PATH },
      tty: false,
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
    });
    expect(plan.sandboxType).toBe('exec-server');
    const child = (await spawner.spawn({
      argv: plan.argv,
      cwd: plan.cwd,
      env: plan.env,
      tty: false,
      stdin: 'closed',
    })) as ExecProcess & {
      sandboxType: string;
    };
    expect(child.sandboxType).toBe('linuxSeccomp');
    const { text, status } = await runToEnd(child);
    expect(text).toContain('inside');
    expect(text).toContain('Read-only file system');
    expect(status).toMatchObject({ exitCode: 1, sandboxDenied: true });
  });

  it('without a sandbox on the server: the probe says why and how to fix it; a direct request fails closed', async () => {
    const spawner = stdioSpawner(['--sandbox-backends', '']);
    onTestFinished(() => spawner.close());
    const probe = await createExecServerSandbox(spawner).probe();
    expect(probe).toMatchObject({ available: false, reason: expect.stringContaining('does not advertise') });
    const workspace = tempDir('ux-es-remote-nobox-');
    const sandbox = encodeSandboxContext({
      argv: ['true'],
      cwd: workspace,
      env: {},
      tty: false,
      policy: { fileSystem: { kind: 'unrestricted' }, network: 'restricted' },
    });
    const error = await spawner
      .spawn({ ...request, cwd: workspace, argv: ['true'], sandbox })
      .catch((e: unknown) => e);
    expect(SpawnFailedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('sandbox requested but none can be applied here');
    expect(SandboxUnavailableError.isInstance(error)).toBe(false);
  });

  it('a plan of the exec-server sandbox can never run on a local spawner', async () => {
    const { createLocalSpawner } = await import('@ux/spawn');
    const spawner = stdioSpawner();
    onTestFinished(() => spawner.close());
    const plan = await createExecServerSandbox(spawner).plan({
      argv: ['true'],
      cwd: '/tmp',
      env: { PATH },
      tty: false,
      policy: { fileSystem: { kind: 'unrestricted' }, network: 'restricted' },
    });
    await expect(createLocalSpawner().spawn({ ...request, argv: plan.argv })).rejects.toThrow(/NUL byte/);
  });
});

describe('interactive use', () => {
  it('resizes a remote terminal and round-trips writes', async () => {
    const spawner = stdioSpawner();
    onTestFinished(() => spawner.close());
    const child = await spawner.spawn({
      ...request,
      argv: ['sh', '-c', 'read line; stty size; read again'],
      tty: true,
      stdin: 'pipe',
    });
    child.resize?.({ rows: 33, cols: 111 });
    await child.write('go\n');
    await waitForOutput(child, '33 111');
    await child.terminate();
    // terminate() sends SIGTERM first; sh dies of it.
    expect((await child.exited).exitCode).toBe(143);
  });
});

describe('shell snapshots made in the remote environment', () => {
  it('runs a login command with the server’s snapshot: what the profile set, none of what it printed', async () => {
    const spawner = stdioSpawner([], 'snapshot-box');
    onTestFinished(() => spawner.close());
    const home = tempDir('ux-es-client-snap-');
    writeFileSync(join(home, '.bash_profile'), "export FROM_PROFILE=remote-value\necho 'profile noise'\n");
    const run = async () => {
      const process = await spawner.spawn({
        ...request,
        argv: ['/bin/bash', '-lc', 'echo "got $FROM_PROFILE"'],
        cwd: home,
        env: { PATH, HOME: home },
        shellSnapshot: { scopeId: 'door-session', shell: { name: 'bash', path: '/bin/bash' } },
      });
      return runToEnd(process, 15_000);
    };
    for (const attempt of [1, 2]) {
      const { text, status } = await run();
      expect(status.exitCode, `attempt ${attempt}`).toBe(0);
      expect(text).toBe('got remote-value\n');
    }
  });
});
