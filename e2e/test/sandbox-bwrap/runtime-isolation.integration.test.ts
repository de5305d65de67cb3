// ux's runtime files out of every sandbox's reach: the runtime directory of each backend
// in the per-user runtime root, masked in every plan of every backend; no seccomp program on disk;
// removal through descriptors, raced by a command that swaps a directory for a link; the private /tmp
// of a session; the host paths a launch reads inside. Each checked on the host, each with a control
// that shows the same attack or check would see the difference.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { type EffectivePolicy, effectivePolicyFromSandboxPolicy } from '@ux/protocol';
import { runToEnd } from '@ux/protocol-testing';
import { createProcessRuntimeDir, uxRuntimeRoot, uxRuntimeRoots } from '@ux/protocol-utils';
import {
  type BwrapSandbox,
  checkedNativeBinary,
  createBwrapSandbox,
  removeThroughDescriptors,
} from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';
const shim = () => realpathSync(checkedNativeBinary('ux-sandbox-exec'));

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

/** workspace-write with the host's /tmp granted, private to the session or not. */
function policy(privateTmp: boolean, network: 'restricted' | 'enabled' = 'restricted'): EffectivePolicy {
  return {
    ...effectivePolicyFromSandboxPolicy({
      type: 'workspace-write',
      writable_roots: [],
      network_access: network === 'enabled',
      exclude_tmpdir_env_var: true,
      exclude_slash_tmp: false,
    }),
    privateTmp,
  };
}

/** A backend closed when the test ends (before the leak check). */
function backend(): BwrapSandbox {
  const created = createBwrapSandbox();
  onTestFinished(() => created.close());
  return created;
}

interface RunOptions {
  privateTmp?: boolean;
  cwd?: string;
  network?: 'restricted' | 'enabled';
  hostPaths?: string[];
}

async function start(sandbox: BwrapSandbox, script: string, options: RunOptions = {}) {
  const cwd = options.cwd ?? realpathSync(tempDir('ux-rt-ws-'));
  const plan = await sandbox.plan({
    argv: ['/bin/bash', '-c', script],
    cwd,
    env: { PATH, HOME: '/nonexistent' },
    policy: policy(options.privateTmp ?? false, options.network),
    tty: false,
    ...(options.hostPaths ? { hostPaths: options.hostPaths } : {}),
  });
  onTestFinished(() => plan.cleanup?.());
  const child = await spawner.spawn({
    argv: plan.argv,
    cwd: plan.cwd,
    env: plan.env,
    tty: false,
    stdin: 'closed',
  });
  onTestFinished(() => child.terminate());
  return { plan, child };
}

async function sandboxed(sandbox: BwrapSandbox, script: string, options: RunOptions = {}) {
  const { plan, child } = await start(sandbox, script, options);
  const { status, text } = await runToEnd(child, 20_000);
  await plan.cleanup?.();
  return { exitCode: status.exitCode, output: text, notes: plan.enforcement.notes };
}

/** The backend's runtime directory, from the note a private /tmp plan carries. */
async function runtimeDirOf(sandbox: BwrapSandbox): Promise<string> {
  const { notes } = await sandboxed(sandbox, 'true', { privateTmp: true });
  const match = /on the host it is (\/\S+)\/tmp\. /.exec(notes.join('\n'));
  if (!match) throw new Error(`no private /tmp note in ${JSON.stringify(notes)}`);
  return match[1]!;
}

/** Every file below `dir` (relative), through lstat: what is really there on the host. */
function listTree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('runtime directories of other ux processes (backends)', () => {
  it('a command of one backend can neither see, read nor write another backend’s runtime directory or any runtime root; no seccomp program is a file', async () => {
    const a = backend();
    const b = backend();
    const dirA = await runtimeDirOf(a);
    const dirB = await runtimeDirOf(b);
    const root = uxRuntimeRoot();
    expect(dirA.startsWith(`${realpathSync(root)}/bwrap-${process.pid}-`)).toBe(true);
    expect(dirB).not.toBe(dirA);
    // The seccomp programs were the target of the attack: none is on disk, whatever the network mode.
    for (const network of ['restricted', 'enabled'] as const) await sandboxed(a, 'true', { network });
    expect(readdirSync(dirA).sort()).toEqual(['denied', 'tmp']);
    const before = listTree(dirA);
    expect(before.filter((path) => /bpf|seccomp/.test(path))).toEqual([]);
    expect(listTree(dirB).filter((path) => /bpf|seccomp/.test(path))).toEqual([]);
    const roots = uxRuntimeRoots().filter((path) => existsSync(path));
    const attack = [
      ...roots.flatMap((r) => [
        `ls -A '${r}' && echo "LISTED ${r}"`,
        `touch '${r}/planted' && echo "PLANTED ${r}"`,
      ]),
      `cat '${dirA}/denied' && echo READ`,
      `echo evil > '${dirA}/evil' && echo WROTE`,
      `mkdir '${dirA}/tmp/evil' && echo MKDIR`,
      'exit 0',
    ].join('; ');
    // The control: on the host, the same script reaches A's directory (so the paths are right).
    const control = execBash(attack.replace(/touch [^;]*planted[^;]*;/g, ''));
    expect(control).toContain('WROTE');
    rmSync(join(dirA, 'evil'));
    rmSync(join(dirA, 'tmp', 'evil'), { recursive: true });
    for (const privateTmp of [false, true]) {
      const result = await sandboxed(b, attack, { privateTmp });
      expect(result.output).not.toMatch(/LISTED|PLANTED|READ|WROTE|MKDIR/);
    }
    expect(listTree(dirA)).toEqual(before);
    for (const r of roots) expect(existsSync(join(r, 'planted'))).toBe(false);
    // And A's next command still has its filter: no unix socket reaches a listener on the host.
    const socketDir = realpathSync(tempDir('ux-rt-sock-'));
    const socketPath = join(socketDir, 'host.sock');
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const reach = await sandboxed(
      a,
      `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${socketPath}'); print('CONNECTED')"`,
      { network: 'enabled' },
    );
    expect(reach.output).not.toContain('CONNECTED');
    expect(reach.output).toMatch(/PermissionError|Operation not permitted/);
    expect(connections).toBe(0);
  });
});

describe('the private /tmp of a session', () => {
  it('is shared by the session’s commands, seen by nothing outside, keeps a workspace in /tmp writable, and goes at close', async () => {
    const a = backend();
    const name = `ux-private-tmp-${process.pid}-${Date.now()}`;
    const first = await sandboxed(a, `echo from-a > /tmp/${name} && echo "TMPDIR=$TMPDIR"`, {
      privateTmp: true,
    });
    expect(first.output).toBe('TMPDIR=/tmp\n');
    const second = await sandboxed(a, `cat /tmp/${name}`, { privateTmp: true });
    expect(second.output).toBe('from-a\n');
    expect(existsSync(`/tmp/${name}`)).toBe(false);
    const dirA = await runtimeDirOf(a);
    expect(readFileSync(join(dirA, 'tmp', name), 'utf8')).toBe('from-a\n');
    // A workspace inside the host's /tmp stays writable at its own path on top of the private /tmp.
    const ws = realpathSync(tempDir('ux-rt-ws-'));
    expect(ws.startsWith('/tmp/')).toBe(true);
    const write = await sandboxed(a, `echo in-ws > made-here && cat /tmp/${name}`, {
      privateTmp: true,
      cwd: ws,
    });
    expect(write.output).toBe('from-a\n');
    expect(readFileSync(join(ws, 'made-here'), 'utf8')).toBe('in-ws\n');
    // Another session does not see it.
    const b = backend();
    const other = await sandboxed(b, `cat /tmp/${name}`, { privateTmp: true });
    expect(other.output).toMatch(/No such file/);
    await a.close();
    expect(existsSync(dirA)).toBe(false);
    // The control: without a private /tmp, the same write lands in the host's /tmp.
    const shared = await sandboxed(b, `echo shared > /tmp/${name}`, { privateTmp: false });
    expect(shared.exitCode).toBe(0);
    onTestFinished(() => rmSync(`/tmp/${name}`, { force: true }));
    expect(readFileSync(`/tmp/${name}`, 'utf8')).toBe('shared\n');
  });

  it('host paths stay visible, read-only, under a private /tmp and inside the hidden runtime root', async () => {
    const a = backend();
    const snapshotDir = createProcessRuntimeDir('snaptest');
    onTestFinished(() => removeThroughDescriptors(shim(), [snapshotDir]).then(() => undefined));
    const snapshot = join(snapshotDir, 'snapshot.sh');
    writeFileSync(snapshot, 'export FROM_SNAPSHOT=1\n');
    const legacyDir = realpathSync(tempDir('ux-rt-legacy-'));
    const legacy = join(legacyDir, 'snap.sh');
    writeFileSync(legacy, 'legacy\n');
    const script = `for f in '${snapshot}' '${legacy}'; do c=$(cat "$f") && echo "READ $f: $c"; echo x >> "$f" && echo "WROTE $f"; done; exit 0`;
    // The control first (a session that never bound them): the runtime root's file is hidden, and the
    // host's /tmp is out of sight.
    const hidden = await sandboxed(backend(), script, { privateTmp: true });
    expect(hidden.output).not.toMatch(/READ|WROTE/);
    for (const privateTmp of [true, false]) {
      const shown = await sandboxed(a, script, { privateTmp, hostPaths: [snapshot, legacy] });
      expect(shown.output).toContain(`READ ${snapshot}: export FROM_SNAPSHOT=1\n`);
      expect(shown.output).toContain(`READ ${legacy}: legacy\n`);
      expect(shown.output).not.toContain('WROTE');
      expect(shown.output).toMatch(/Read-only file system/);
    }
    expect(readFileSync(snapshot, 'utf8')).toBe('export FROM_SNAPSHOT=1\n');
    expect(readFileSync(legacy, 'utf8')).toBe('legacy\n');
  });
});

describe('removal through descriptors, raced by a command that swaps a directory for a link', () => {
  // In the session's private /tmp, python swaps every directory of /tmp/race for a symbolic link to the
  // canary and back, and refills what the removal takes, until it is killed.
  const racer = (canary: string) =>
    [
      'import os, shutil',
      `canary = ${JSON.stringify(canary)}`,
      "base = '/tmp/race'",
      'N = 8',
      'def fill(d):',
      '    os.makedirs(d, exist_ok=True)',
      '    for j in range(200):',
      "        open(f'{d}/f{j}', 'w').close()",
      'def to_link(i):',
      "    d, t = f'{base}/d{i}', f'{base}/t{i}'",
      '    if os.path.islink(d):',
      '        return',
      '    shutil.rmtree(t, ignore_errors=True)',
      '    for step in (lambda: os.rename(d, t), lambda: os.symlink(canary, d)):',
      '        try:',
      '            step()',
      '        except OSError:',
      '            pass',
      'def to_dir(i):',
      "    d, t = f'{base}/d{i}', f'{base}/t{i}'",
      '    for step in (lambda: os.unlink(d), lambda: os.rename(t, d), lambda: fill(d)):',
      '        try:',
      '            step()',
      '        except OSError:',
      '            pass',
      'for i in range(N):',
      "    fill(f'{base}/d{i}')",
      "open('/tmp/ready', 'w').close()",
      'while True:',
      '    for i in range(N):',
      '        to_link(i)',
      '    for i in range(N):',
      '        to_dir(i)',
    ].join('\n');

  function makeCanary(): { dir: string; files: string[] } {
    const dir = realpathSync(tempDir('ux-rt-canary-'));
    const files = Array.from({ length: 200 }, (_, i) => `f${i}`);
    for (const name of files) writeFileSync(join(dir, name), 'keep');
    // The racer's directories hold the same names: rmSync lists a directory, then removes each name
    // by its path, through whatever the racer has put there meanwhile.
    return { dir, files };
  }

  async function raceUntilReady(sandbox: BwrapSandbox, canary: string) {
    const dir = await runtimeDirOf(sandbox);
    const ws = realpathSync(tempDir('ux-rt-racer-'));
    writeFileSync(join(ws, 'racer.py'), racer(canary));
    const { child } = await start(sandbox, 'exec python3 racer.py', { privateTmp: true, cwd: ws });
    for (let waited = 0; !existsSync(join(dir, 'tmp', 'ready')); waited++) {
      if (waited > 1500) throw new Error(`the racer did not start: ${child.pid}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { dir, child };
  }

  /** Waits (a bounded while) until the racer has made its directories again. */
  async function refilled(dir: string): Promise<void> {
    for (let waited = 0; waited < 400 && !existsSync(join(dir, 'tmp', 'race', 'd7')); waited++)
      await new Promise((resolve) => setTimeout(resolve, 5));
  }

  it('close() removes the session’s runtime directory and the canary keeps every file (control: rmSync loses some)', async () => {
    const ROUNDS = 200;
    // The control first: the same race against fs.rmSync(recursive) on the same directory. Node's
    // rmSync often gives up when it meets a link where it saw a directory, so it is called again.
    let lost = 0;
    for (let attempt = 0; attempt < 5 && lost === 0; attempt++) {
      const canary = makeCanary();
      const victim = backend();
      const { dir, child } = await raceUntilReady(victim, canary.dir);
      for (let round = 0; round < ROUNDS && lost === 0; round++) {
        await refilled(dir);
        try {
          rmSync(join(dir, 'tmp', 'race'), { recursive: true, force: true });
        } catch {
          // ENOTEMPTY (the racer refills), or a link where rmSync saw a directory.
        }
        lost = canary.files.length - readdirSync(canary.dir).length;
      }
      await child.terminate();
    }
    expect(lost).toBeGreaterThan(0);

    const canary = makeCanary();
    const sandbox = createBwrapSandbox();
    const { dir, child } = await raceUntilReady(sandbox, canary.dir);
    // More chances than rmSync needed, then the backend's own close() while the racer still runs.
    for (let round = 0; round < ROUNDS / 5; round++) {
      await refilled(dir);
      await removeThroughDescriptors(shim(), [join(dir, 'tmp', 'race')]);
    }
    expect(existsSync(join(dir, 'tmp', 'ready'))).toBe(true);
    await sandbox.close();
    await child.terminate();
    expect(readdirSync(canary.dir).sort()).toEqual([...canary.files].sort());
    // Whatever the racer made after the last pass goes with one more removal, once it is gone.
    await removeThroughDescriptors(shim(), [dir]);
    expect(existsSync(dir)).toBe(false);
  }, 120_000);

  it('sweeps the runtime directories of ux processes that are gone, through descriptors', async () => {
    const root = uxRuntimeRoot();
    const canary = makeCanary();
    const dead = join(root, 'bwrap-99999999-deadbeef');
    const alive = join(root, 'test-1-deadbeef');
    mkdirSync(join(dead, 'tmp', 'sub'), { recursive: true });
    symlinkSync(canary.dir, join(dead, 'tmp', 'to-canary'));
    mkdirSync(alive);
    onTestFinished(() => removeThroughDescriptors(shim(), [dead, alive]).then(() => undefined));
    const sandbox = createBwrapSandbox();
    expect((await sandbox.probe()).available).toBe(true);
    await sandbox.close();
    expect(existsSync(dead)).toBe(false);
    // pid 1 is alive: its directory stays.
    expect(existsSync(alive)).toBe(true);
    expect(readdirSync(canary.dir)).toHaveLength(canary.files.length);
  });
});

function execBash(script: string): string {
  const result = spawnSync('/bin/bash', ['-c', script], { encoding: 'utf8' });
  return `${result.stdout}${result.stderr}`;
}
