// Remote environments through the door, against real `ux exec-server` processes: one over WebSocket
// with a capability token, one over stdio. Routing by `environment_id`, the errors a model gets for a
// wrong id or a lost server, fail-closed sandboxing, and no process left on either side.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, waitUntilDead } from '@ux/protocol-testing';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { type DoorOptions, eventually, makeDoor, ofType, parseReceipt } from '../support/door.js';
import {
  startWebSocketServer,
  stdioEnvironment,
  useThreeEnvironments,
  webSocketEnvironment,
} from './test-environments.js';

const environments = useThreeEnvironments();
const threeDoor = (options: DoorOptions = {}) => environments.door(options);

const ctx = (callId = 'call-1') => ({ callId });

/** The command line of the parent of the shell a command ran in. */
const PARENT = "tr '\\0' ' ' < /proc/$PPID/cmdline";

describe('environment_id', () => {
  it('is offered when there is a choice, and routes each call to its environment', async () => {
    const { door, events } = threeDoor();
    const schema = door.tools.find((tool) => tool.name === 'exec_command')!;
    expect((schema.parameters.properties as Record<string, unknown>).environment_id).toMatchObject({
      enum: ['local', 'box', 'dev'],
      description: 'Which environment to run in: local, box or dev. Default: local.',
    });
    const here = parseReceipt((await door.execCommand({ cmd: PARENT }, ctx('a'))).text);
    const onBox = parseReceipt(
      (await door.execCommand({ cmd: PARENT, environment_id: 'box' }, ctx('b'))).text,
    );
    const onDev = parseReceipt(
      (await door.execCommand({ cmd: PARENT, environment_id: 'dev' }, ctx('c'))).text,
    );
    expect(here.output).not.toContain('exec-server-bin.js');
    expect(onBox.output).toContain('exec-server-bin.js --listen ws://');
    expect(onDev.output).toContain('exec-server-bin.js --listen stdio');
    expect(ofType(events, 'exec_command_begin').map((event) => event.cwd)).toHaveLength(3);
  });

  it('is not offered with one environment', () => {
    const { door } = makeDoor();
    expect(JSON.stringify(door.tools)).not.toContain('environment_id');
  });

  it('runs in the default environment when the call does not say, in that environment’s cwd', async () => {
    const cwd = tempDir('ux-env-cwd-');
    const { door } = threeDoor({
      door: { environments: { box: { spawner: environments.box.spawner, cwd } }, defaultEnvironment: 'box' },
    });
    const receipt = parseReceipt((await door.execCommand({ cmd: `pwd; ${PARENT}` }, ctx())).text);
    expect(receipt.output).toContain(`${cwd}\n`);
    expect(receipt.output).toContain('--listen ws://');
    expect(door.processes()).toEqual([]);
  });

  it('answers an unknown id with the known ones, and runs nothing', async () => {
    const { door, events } = threeDoor();
    const response = await door.execCommand({ cmd: 'echo hi', environment_id: 'bx' }, ctx());
    expect(response.success).toBe(false);
    expect(response.result).toMatchObject({
      status: 'failed',
      command: 'echo hi',
      error: { message: 'unknown environment_id "bx"; known environments: local, box, dev' },
    });
    expect(ofType(events, 'exec_command_begin')).toEqual([]);
  });

  it('without local and without a default, a call without an id is unavailable; with one it runs', async () => {
    const { door } = threeDoor({ door: { localEnvironment: false } });
    const response = await door.execCommand({ cmd: 'echo hi' }, ctx('a'));
    expect(response.result.error?.message).toBe('unified exec is unavailable in this session');
    const local = await door.execCommand({ cmd: 'echo hi', environment_id: 'local' }, ctx('b'));
    expect(local.text).toContain('environment_id "local" is not available in this session');
    const remote = parseReceipt(
      (await door.execCommand({ cmd: 'echo hi', environment_id: 'dev' }, ctx('c'))).text,
    );
    expect(remote.output).toBe('hi\n');
  });

  it('keeps a live session in its environment, and write_stdin reaches it there', async () => {
    const { door } = threeDoor();
    const started = parseReceipt(
      (
        await door.execCommand(
          { cmd: 'read line; echo "got $line"', environment_id: 'box', tty: true, yield_time_ms: 300 },
          ctx(),
        )
      ).text,
    );
    expect(started.sessionId).toBeDefined();
    expect(door.processes()).toEqual([expect.objectContaining({ environment: 'box', running: true })]);
    const answered = parseReceipt(
      (
        await door.writeStdin(
          { session_id: started.sessionId, chars: 'yes\n', yield_time_ms: 2000 },
          ctx('w'),
        )
      ).text,
    );
    expect(answered.output).toContain('got yes');
  });
});

describe('sandboxes in remote environments', () => {
  it('the policy travels to the server, which enforces it there', async () => {
    const { door, events, cwd } = threeDoor({
      orchestrator: { policy: { type: 'read-only', network_access: false } },
    });
    const receipt = parseReceipt(
      (
        await door.execCommand(
          { cmd: `touch ${join(cwd, 'x')}; echo status=$?`, environment_id: 'dev' },
          ctx(),
        )
      ).text,
    );
    expect(receipt.output).toMatch(/Read-only file system/i);
    expect(receipt.output).toContain('status=1');
    expect(ofType(events, 'exec_command_begin')[0]!.sandbox).toBe('exec-server');
    // The level names what the server reported it applied there (bubblewrap: linuxSeccomp).
    expect(receipt.level).toBe('exec-server: linuxSeccomp (file system enforced, network enforced)');
    expect(ofType(events, 'exec_command_begin')[0]!.sandbox_level?.backend).toBe('exec-server: linuxSeccomp');
  });

  it('a server that cannot sandbox fails the call closed, with the reason; nothing runs there or here', async () => {
    const bare = stdioEnvironment('bare', ['--sandbox-backends', ',']);
    try {
      const { door, events } = makeDoor({
        orchestrator: {
          environments: { bare: bare.sandbox },
          policy: {
            type: 'workspace-write',
            writable_roots: [],
            network_access: false,
            exclude_slash_tmp: false,
            exclude_tmpdir_env_var: false,
          },
        },
        door: { environments: { bare: { spawner: bare.spawner } }, defaultEnvironment: 'bare' },
      });
      const response = await door.execCommand({ cmd: 'echo should-not-run' }, ctx());
      expect(response.success).toBe(false);
      expect(response.text).toContain('sandbox "exec-server" unavailable: environment "bare"');
      expect(response.text).toContain('does not advertise that it applies sandboxes');
      expect(ofType(events, 'exec_command_begin')).toMatchObject([
        { sandbox: 'none', blocked: { status: 'failed' } },
      ]);
    } finally {
      await bare.spawner.close();
    }
  });
});

describe('reaching a server', () => {
  it('a wrong token is a clear error and starts nothing', async () => {
    const wrong = webSocketEnvironment('box', environments.server.url, 'not-the-token');
    try {
      const { door } = makeDoor({
        orchestrator: { environments: { box: wrong.sandbox } },
        door: { environments: { box: { spawner: wrong.spawner } }, defaultEnvironment: 'box' },
      });
      const response = await door.execCommand({ cmd: 'echo hi' }, ctx());
      expect(response.success).toBe(false);
      expect(response.text).toContain('cannot reach environment "box"');
      expect(response.text).toContain('refused the capability token');
      expect(response.text).toContain('not run');
    } finally {
      await wrong.spawner.close();
    }
  });

  it('a server that is down is a clear error naming the environment, and nothing runs', async () => {
    const later = await startWebSocketServer();
    const { url, token } = later;
    await later.stop();
    const down = webSocketEnvironment('box', url, token);
    const { door } = makeDoor({
      orchestrator: { environments: { box: down.sandbox } },
      door: { environments: { box: { spawner: down.spawner } }, defaultEnvironment: 'box' },
    });
    try {
      const response = await door.execCommand({ cmd: 'echo hi' }, ctx('a'));
      expect(response.success).toBe(false);
      expect(response.text).toMatch(/cannot reach environment "box": .*ECONNREFUSED/);
    } finally {
      await down.spawner.close();
    }
  });

  it('a server killed mid-session ends the session with the reason; the next call reconnects', async () => {
    const own = stdioEnvironment('dev');
    const dir = tempDir('ux-env-kill-');
    const { door } = makeDoor({
      orchestrator: { environments: { dev: own.sandbox } },
      door: { environments: { dev: { spawner: own.spawner } }, defaultEnvironment: 'dev' },
    });
    try {
      const started = parseReceipt(
        (
          await door.execCommand(
            { cmd: `echo $PPID > ${dir}/server; echo $$ > ${dir}/shell; exec sleep 300`, yield_time_ms: 500 },
            ctx('a'),
          )
        ).text,
      );
      expect(started.sessionId).toBeDefined();
      await eventually(() => existsSync(join(dir, 'shell')));
      const serverPid = Number(readFileSync(join(dir, 'server'), 'utf8'));
      const shellPid = Number(readFileSync(join(dir, 'shell'), 'utf8'));
      process.kill(serverPid, 'SIGKILL');
      const polled = await door.writeStdin({ session_id: started.sessionId, yield_time_ms: 5000 }, ctx('b'));
      expect(polled.text).toContain('environment "dev" disconnected');
      expect(parseReceipt(polled.text).exitCode).toBe(-1);
      expect(door.processes()).toEqual([]);
      // The sleeper was the server's child: it must not outlive it.
      expect(await waitUntilDead(shellPid, 5000)).toBe(true);
      const again = parseReceipt((await door.execCommand({ cmd: 'echo back' }, ctx('c'))).text);
      expect(again.output).toBe('back\n');
    } finally {
      await own.spawner.close();
    }
  });

  it('shutdown ends the remote processes it started', async () => {
    const dir = tempDir('ux-env-shutdown-');
    const { door } = threeDoor();
    const started = parseReceipt(
      (
        await door.execCommand(
          { cmd: `echo $$ > ${dir}/pid; exec sleep 300`, environment_id: 'box', yield_time_ms: 300 },
          ctx(),
        )
      ).text,
    );
    expect(started.sessionId).toBeDefined();
    await eventually(() => existsSync(join(dir, 'pid')));
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    expect(isAlive(pid)).toBe(true);
    await door.shutdown();
    expect(await waitUntilDead(pid, 5000)).toBe(true);
  });
});
