// Client-side logic a real server shows only by chance (docs/reference/exec-server-protocol.md §5,
// ordering: notifications before the start response or out of seq order in a few runs out of 150;
// servers that ignore `sandbox`). A scripted peer answers over an in-memory transport; the real servers
// are exercised in the integration tests of @ux/exec-server, @ux/unified-exec and interop/codex.

import { SandboxUnavailableError } from '@ux/protocol';
import { runToEnd } from '@ux/protocol-testing';
import { encodeSandboxContext } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { createExecServerSandbox, EXEC_SERVER_SANDBOX_LAUNCHER } from './exec-server-sandbox.js';
import { createExecServerSpawner } from './exec-server-spawner.js';
import { type ExecServerTransport, TransportEvents } from './exec-server-transport.js';

type Script = (message: Record<string, unknown>, reply: (message: object) => void) => void;

function scriptedTransport(script: Script, info: Record<string, unknown> = {}, initialize?: Script) {
  const events = new TransportEvents();
  const sent: Record<string, unknown>[] = [];
  const reply = (message: object) => setImmediate(() => events.message(JSON.stringify(message)));
  const transport: ExecServerTransport = {
    description: 'scripted peer',
    send(text) {
      const message = JSON.parse(text) as Record<string, unknown>;
      sent.push(message);
      if (message.method === 'initialize' && initialize) {
        initialize(message, reply);
        return;
      }
      if (message.method === 'initialize') {
        reply({
          id: message.id,
          result: {
            sessionId: 's',
            environmentInfo: { executorVersion: '9.9.9', capabilities: {}, ...info },
          },
        });
        return;
      }
      script(message, reply);
    },
    onMessage: (listener) => events.onMessage(listener),
    onClose: (listener) => events.onClose(listener),
    close: async () => events.close('closed by the client'),
  };
  return { transport, sent, lose: (reason: string) => events.close(reason) };
}

const request = { argv: ['x'], cwd: '/tmp', env: {}, tty: false, stdin: 'closed' as const };
const chunk = (text: string) => Buffer.from(text).toString('base64');

describe('exec-server spawner against a scripted peer', () => {
  it('puts notifications that overtake the start response, and out-of-order ones, back in seq order', async () => {
    const peer = scriptedTransport((message, reply) => {
      if (message.method !== 'process/start') return;
      const processId = (message.params as { processId: string }).processId;
      const note = (method: string, params: object) => reply({ method, params: { processId, ...params } });
      note('process/output', { seq: 2, stream: 'stderr', chunk: chunk('b') });
      note('process/closed', { seq: 4 });
      note('process/output', { seq: 1, stream: 'stdout', chunk: chunk('a') });
      reply({ id: message.id, result: { processId, sandboxType: 'none' } });
      note('process/exited', { seq: 3, exitCode: 5, sandboxDenied: false });
    });
    const spawner = createExecServerSpawner({ connect: async () => peer.transport });
    const child = await spawner.spawn(request);
    const seen: [string, string | undefined][] = [];
    child.onOutput((data, source) => seen.push([Buffer.from(data).toString(), source]));
    const status = await child.exited;
    await child.closed;
    // Everything arrived before the listener: it gets the bytes in seq order, merged (OutputHub contract).
    expect(seen).toEqual([['ab', undefined]]);
    expect(status).toEqual({ exitCode: 5, sandboxDenied: false });
  });

  it('fills a hole that stays open with process/read', async () => {
    const peer = scriptedTransport((message, reply) => {
      const params = message.params as { processId: string; afterSeq?: number };
      if (message.method === 'process/start') {
        reply({ id: message.id, result: { processId: params.processId, sandboxType: 'none' } });
        // seq 1 is never pushed (as when a slow client's notifications were skipped).
        reply({
          method: 'process/output',
          params: { processId: params.processId, seq: 2, stream: 'stdout', chunk: chunk('second') },
        });
        reply({
          method: 'process/exited',
          params: { processId: params.processId, seq: 3, exitCode: 0, sandboxDenied: false },
        });
        reply({ method: 'process/closed', params: { processId: params.processId, seq: 4 } });
      }
      if (message.method === 'process/read') {
        expect(params.afterSeq).toBe(0);
        reply({
          id: message.id,
          result: {
            chunks: [{ seq: 1, stream: 'stdout', chunk: chunk('first ') }],
            nextSeq: 5,
            exited: true,
            exitCode: 0,
            closed: true,
            failure: null,
            sandboxDenied: false,
          },
        });
      }
    });
    const spawner = createExecServerSpawner({ connect: async () => peer.transport });
    const { text } = await runToEnd(await spawner.spawn(request), 5_000);
    expect(text).toBe('first second');
    expect(peer.sent.filter((m) => m.method === 'process/read')).toHaveLength(1);
  });

  it('kills and refuses a start that was asked for a sandbox and got none', async () => {
    const peer = scriptedTransport((message, reply) => {
      const params = message.params as { processId: string };
      if (message.method === 'process/start')
        reply({ id: message.id, result: { processId: params.processId, sandboxType: 'none' } });
      if (message.method === 'process/terminate') reply({ id: message.id, result: { running: true } });
    });
    const spawner = createExecServerSpawner({ name: 'lax server', connect: async () => peer.transport });
    const error = await spawner
      .spawn({
        ...request,
        sandbox: {
          permissions: { type: 'external', network: 'restricted' },
          windowsSandboxLevel: 'disabled',
        },
      })
      .catch((e: unknown) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      'lax server started the command without the sandbox it was asked for',
    );
    expect(peer.sent.map((m) => m.method)).toEqual([
      'initialize',
      'initialized',
      'process/start',
      'process/terminate',
    ]);
  });

  it('answers server requests with -32601, reports malformed messages, and fails pending requests on loss', async () => {
    const problems: string[] = [];
    let startId: unknown;
    const peer = scriptedTransport((message, reply) => {
      if (message.method === 'process/start') {
        startId = message.id;
        reply({ id: 'srv-1', method: 'network/policyRequest', params: {} });
        reply({ method: 'process/exited', params: { processId: 1 } });
        reply('not json' as unknown as object);
      }
    });
    const spawner = createExecServerSpawner({
      connect: async () => peer.transport,
      onProtocolError: (problem) => problems.push(problem),
    });
    const pending = spawner.spawn(request);
    // Until the client has handled the three replies: answered the request and reported two problems.
    const deadline = Date.now() + 15_000;
    while ((problems.length < 2 || !peer.sent.some((m) => m.id === 'srv-1')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(startId).toBeDefined();
    expect(peer.sent.find((m) => m.id === 'srv-1')).toEqual({
      id: 'srv-1',
      error: { code: -32601, message: 'this client does not handle `network/policyRequest`' },
    });
    expect(problems).toEqual([
      expect.stringContaining('dropped a malformed process/exited notification'),
      expect.stringContaining('dropped an unreadable message'),
    ]);
    peer.lose('the wire was cut');
    await expect(pending).rejects.toThrow(
      'failed to start x: process/start failed: the wire was cut; the command may not have run',
    );
  });

  it("sends the exec-server sandbox's plan as the wire sandbox, encoded by the protocol's codec", async () => {
    const peer = scriptedTransport((message, reply) => {
      const params = message.params as { processId: string };
      if (message.method !== 'process/start') return;
      reply({ id: message.id, result: { processId: params.processId, sandboxType: 'linuxSeccomp' } });
      reply({ method: 'process/exited', params: { processId: params.processId, seq: 1, exitCode: 0 } });
      reply({ method: 'process/closed', params: { processId: params.processId, seq: 2 } });
    });
    const spawner = createExecServerSpawner({ name: 'box', connect: async () => peer.transport });
    const backend = createExecServerSandbox(spawner);
    // The scripted peer advertises no capability: the probe says why, before anything is planned.
    expect(await backend.probe()).toMatchObject({
      available: false,
      reason: expect.stringContaining('(executor 9.9.9) does not advertise that it applies sandboxes'),
    });
    const planRequest = {
      argv: ['make', 'test'],
      cwd: '/work/my proj',
      env: { HOME: '/home/dev' },
      tty: false,
      policy: {
        fileSystem: {
          kind: 'restricted' as const,
          entries: [
            { path: { type: 'special' as const, value: 'root' as const }, access: 'read' as const },
            { path: { type: 'special' as const, value: 'cwd' as const }, access: 'write' as const },
            { path: { type: 'path' as const, path: '~/.ssh' }, access: 'none' as const },
          ],
        },
        network: 'restricted' as const,
      },
    };
    const plan = await backend.plan(planRequest);
    expect(plan.argv[0]).toBe(EXEC_SERVER_SANDBOX_LAUNCHER);
    const child = await spawner.spawn({ ...request, argv: plan.argv, cwd: plan.cwd, env: plan.env });
    await child.closed;
    expect(child.sandboxType).toBe('linuxSeccomp');
    const start = peer.sent.find((m) => m.method === 'process/start')?.params as Record<string, unknown>;
    expect(start.argv).toEqual(['make', 'test']);
    expect(start.cwd).toBe('file:///work/my%20proj');
    expect(start.sandbox).toEqual(encodeSandboxContext(planRequest));
    expect(start.sandbox).toMatchObject({
      permissions: {
        file_system: {
          entries: [
            { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
            { path: { type: 'path', path: 'file:///work/my%20proj' }, access: 'write' },
            { path: { type: 'path', path: 'file:///home/dev/.ssh' }, access: 'deny' },
          ],
        },
      },
    });
    await spawner.close();
  });

  describe('what a start sends', () => {
    /** A peer that answers every start and ends the process at once; records the start params. */
    function startRecorder(info: Record<string, unknown> = {}) {
      const starts: Record<string, unknown>[] = [];
      const peer = scriptedTransport((message, reply) => {
        if (message.method !== 'process/start') return;
        const params = message.params as Record<string, unknown> & { processId: string };
        starts.push(params);
        reply({ id: message.id, result: { processId: params.processId, sandboxType: 'none' } });
        reply({ method: 'process/exited', params: { processId: params.processId, seq: 1, exitCode: 0 } });
        reply({ method: 'process/closed', params: { processId: params.processId, seq: 2 } });
      }, info);
      return { starts, spawner: createExecServerSpawner({ connect: async () => peer.transport }) };
    }
    const script = { ...request, argv: ['/bin/bash', '-lc', 'apply_patch < p'] };

    it("puts the server's prependPathDirs first on a shell script's PATH, after the login files", async () => {
      const { starts, spawner } = startRecorder({
        prependPathDirs: ['file:///srv/ux%20home/bin', "/opt/it's"],
      });
      await (await spawner.spawn(script)).closed;
      await (await spawner.spawn({ ...request, argv: ['/usr/bin/env', 'true'] })).closed;
      expect(starts[0]!.argv).toEqual([
        '/bin/bash',
        '-lc',
        `export PATH='/srv/ux home/bin':'/opt/it'\\''s':"$PATH"\napply_patch < p`,
      ]);
      expect(starts[1]!.argv).toEqual(['/usr/bin/env', 'true']);
      await spawner.close();
    });

    it('sends shellSnapshot only to a server that offers snapshots (shellSnapshotV2)', async () => {
      const snapshot = { scopeId: 'door-1', shell: { name: 'bash', path: '/bin/bash' } };
      const without = startRecorder();
      await (await without.spawner.spawn({ ...script, shellSnapshot: snapshot })).closed;
      expect(without.starts[0]).not.toHaveProperty('shellSnapshot');
      const withIt = startRecorder({ capabilities: { shellSnapshotV2: true } });
      await (await withIt.spawner.spawn({ ...script, shellSnapshot: snapshot })).closed;
      expect(withIt.starts[0]!.shellSnapshot).toEqual(snapshot);
      await without.spawner.close();
      await withIt.spawner.close();
    });

    it("a request's envPolicy is sent instead of the spawner's", async () => {
      const policy = {
        inherit: 'core' as const,
        ignoreDefaultExcludes: false,
        exclude: [],
        set: {},
        includeOnly: [],
      };
      const { starts, spawner } = startRecorder();
      await (await spawner.spawn({ ...request, envPolicy: policy })).closed;
      expect(starts[0]!.envPolicy).toEqual(policy);
      await spawner.close();
    });
  });

  it('a lost connection ends a live process with a line naming the environment', async () => {
    const peer = scriptedTransport((message, reply) => {
      if (message.method !== 'process/start') return;
      const params = message.params as { processId: string };
      reply({ id: message.id, result: { processId: params.processId, sandboxType: 'none' } });
    });
    const spawner = createExecServerSpawner({
      name: 'environment "dev"',
      connect: async () => peer.transport,
    });
    const child = await spawner.spawn(request);
    let output = '';
    child.onOutput((data) => {
      output += Buffer.from(data).toString();
    });
    peer.lose('the server process exited (signal SIGKILL)');
    expect(await child.exited).toEqual({ exitCode: -1 });
    expect(output).toContain(
      '[ux: environment "dev" disconnected: the server process exited (signal SIGKILL); what became of the process there is unknown]',
    );
  });

  describe('resuming a lost connection (resumeWindowMs)', () => {
    /** A first peer that starts the process and sends `a`; `second` scripts the connections after it. */
    function resumable(second: () => ReturnType<typeof scriptedTransport>, windowMs = 5_000) {
      let processId = '';
      const first = scriptedTransport((message, reply) => {
        if (message.method !== 'process/start') return;
        processId = (message.params as { processId: string }).processId;
        reply({ id: message.id, result: { processId, sandboxType: 'none' } });
        reply({
          method: 'process/output',
          params: { processId, seq: 1, stream: 'stdout', chunk: chunk('a') },
        });
      });
      const later: ReturnType<typeof scriptedTransport>[] = [];
      let connects = 0;
      const spawner = createExecServerSpawner({
        name: 'environment "box"',
        resumeWindowMs: windowMs,
        connect: async () => {
          connects += 1;
          if (connects === 1) return first.transport;
          const peer = second();
          later.push(peer);
          return peer.transport;
        },
      });
      return { first, later, spawner, id: () => processId };
    }

    const collect = (child: { onOutput(listener: (data: Uint8Array) => void): () => void }) => {
      const seen = { text: '' };
      child.onOutput((data) => {
        seen.text += Buffer.from(data).toString();
      });
      return seen;
    };

    it('resumes the session: the process goes on, what was missed is read back, and its end arrives', async () => {
      let processId = '';
      const setup = resumable(() =>
        scriptedTransport((message, reply) => {
          if (message.method !== 'process/read') return;
          // `b` came while nobody listened, and the process exited (seq 3) meanwhile.
          reply({
            id: message.id,
            result: {
              chunks: [{ seq: 2, stream: 'stdout', chunk: chunk('b') }],
              nextSeq: 4,
              exited: true,
              exitCode: 7,
              closed: false,
              failure: null,
            },
          });
          reply({ method: 'process/closed', params: { processId, seq: 4 } });
        }),
      );
      const child = await setup.spawner.spawn(request);
      processId = setup.id();
      const seen = collect(child);
      await waitForText(seen, 'a');
      setup.first.lose('the connection closed (1006)');
      expect(await child.exited).toEqual({ exitCode: 7 });
      await child.closed;
      expect(seen.text).toMatch(
        /^a\n\[ux: the connection to environment "box" was lost \(the connection closed \(1006\)\) and resumed after \d+\.\d s\]\nb$/,
      );
      const initialize = setup.later[0]!.sent.find((message) => message.method === 'initialize')!;
      expect(initialize.params).toMatchObject({ resumeSessionId: 's' });
      const read = setup.later[0]!.sent.find((message) => message.method === 'process/read')!;
      expect(read.params).toMatchObject({ processId, afterSeq: 1 });
      // New commands use the resumed connection: no third connection.
      setup.later[0]!.sent.length = 0;
      await setup.spawner.connection();
      expect(setup.later).toHaveLength(1);
      await setup.spawner.close();
    });

    it('gives up at once when the server no longer has the session', async () => {
      const setup = resumable(() =>
        scriptedTransport(
          () => {},
          {},
          (message, reply) =>
            reply({ id: message.id, error: { code: -32600, message: 'unknown session id s' } }),
        ),
      );
      const child = await setup.spawner.spawn(request);
      const seen = collect(child);
      setup.first.lose('the connection closed (1006)');
      expect(await child.exited).toEqual({ exitCode: -1 });
      expect(seen.text).toContain(
        '[ux: environment "box" disconnected: the connection closed (1006); environment "box" no longer has this session (unknown session id s); what became of the process there is unknown]',
      );
      expect(setup.later).toHaveLength(1);
      await setup.spawner.close();
    });

    it('retries while the server cannot be reached, then reports the process lost when the window ends', async () => {
      let attempts = 0;
      const spawnerOf = () => {
        let first: ReturnType<typeof scriptedTransport> | undefined;
        const spawner = createExecServerSpawner({
          name: 'environment "box"',
          resumeWindowMs: 700,
          connect: async () => {
            if (!first) {
              first = scriptedTransport((message, reply) => {
                if (message.method !== 'process/start') return;
                const processId = (message.params as { processId: string }).processId;
                reply({ id: message.id, result: { processId, sandboxType: 'none' } });
              });
              return first.transport;
            }
            attempts += 1;
            throw new Error('connect ECONNREFUSED 127.0.0.1:9');
          },
        });
        return { spawner, lose: (reason: string) => first!.lose(reason) };
      };
      const { spawner, lose } = spawnerOf();
      const child = await spawner.spawn(request);
      const seen = collect(child);
      lose('the connection closed (1006)');
      expect(await child.exited).toEqual({ exitCode: -1 });
      expect(attempts).toBeGreaterThan(1);
      expect(seen.text).toContain(
        'disconnected: the connection closed (1006); it could not be resumed within 0.7 s: cannot reach environment "box": connect ECONNREFUSED 127.0.0.1:9;',
      );
      await spawner.close();
    });

    it('a terminate while the resume is under way reports the process lost at once', async () => {
      const setup = resumable(() => {
        throw new Error('unreachable');
      }, 60_000);
      const child = await setup.spawner.spawn(request);
      const seen = collect(child);
      setup.first.lose('the connection closed (1006)');
      await child.terminate();
      expect(await child.exited).toEqual({ exitCode: -1 });
      expect(seen.text).toContain(
        'disconnected: the connection closed (1006); ux stopped waiting for it to come back;',
      );
      // Closing the spawner ends the retries.
      await setup.spawner.close();
    });
  });
});

async function waitForText(seen: { text: string }, text: string): Promise<void> {
  for (let i = 0; i < 200 && !seen.text.includes(text); i++) await new Promise((r) => setTimeout(r, 5));
  expect(seen.text).toContain(text);
}
