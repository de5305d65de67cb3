// The host boundary: nothing of ux's own (the per-user runtime roots, other sessions' directories, the
// quarantine, control sockets) can be read, listed, written or connected to from inside; the private
// /tmp is the session's own; what the launch reads (hostPaths) is readable inside a hidden directory
// and never writable. Each probe runs the same script on the host first, as the control.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  SandboxUnavailableError,
} from '@ux/protocol';
import { runToEnd } from '@ux/protocol-testing';
import { createProcessRuntimeDir, ensureUxRuntimeRoot } from '@ux/protocol-utils';
import { createLandlockSandbox } from '@ux/sandbox-landlock';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PATH = '/usr/local/bin:/usr/bin:/bin';
const spawner = createLocalSpawner();
let quarantine: string;
let root: string;
let ws: string;
let other: string;
let socketPath: string;
let server: Server;
let connections = 0;
let backendA: ReturnType<typeof createLandlockSandbox>;
let backendB: ReturnType<typeof createLandlockSandbox>;

const policy = (privateTmp: boolean, slashTmp = false): EffectivePolicy => ({
  ...effectivePolicyFromSandboxPolicy({
    type: 'workspace-write',
    writable_roots: [],
    network_access: false,
    exclude_tmpdir_env_var: true,
    exclude_slash_tmp: !(slashTmp || privateTmp),
  }),
  ...(privateTmp ? { privateTmp: true } : {}),
});

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-landlock-boundary-')));
  ws = join(root, 'workspace');
  mkdirSync(ws);
  quarantine = join(root, 'ux-home', 'quarantine');
  mkdirSync(quarantine, { recursive: true });
  writeFileSync(join(quarantine, 'taken'), 'quarantined-secret');
  // Another ux process's runtime directory, with a control socket in it (an escalation broker's, say).
  other = createProcessRuntimeDir('esc', ensureUxRuntimeRoot());
  writeFileSync(join(other, 'snapshot.sh'), 'export SNAPSHOT=other-session\n');
  socketPath = join(other, 'control.sock');
  server = createServer((socket) => {
    connections++;
    socket.end('control\n');
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  backendA = createLandlockSandbox({ quarantineDir: quarantine });
  backendB = createLandlockSandbox({ quarantineDir: quarantine });
  await warmUpSpawner(spawner);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(other, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});
useLeakCheck();
afterAll(async () => {
  await backendA.close();
  await backendB.close();
});

async function run(
  backend: ReturnType<typeof createLandlockSandbox>,
  script: string,
  options: { privateTmp?: boolean; hostPaths?: string[]; sandbox?: boolean } = {},
) {
  let argv = ['/bin/bash', '-c', script];
  let env: Record<string, string> = { PATH, HOME: process.env.HOME ?? '/root' };
  let cleanup: (() => Promise<void>) | undefined;
  if (options.sandbox !== false) {
    const plan = await backend.plan({
      argv,
      cwd: ws,
      env,
      policy: policy(options.privateTmp ?? true),
      tty: false,
      ...(options.hostPaths ? { hostPaths: options.hostPaths } : {}),
    });
    argv = plan.argv;
    env = plan.env;
    cleanup = plan.cleanup;
  }
  const child = await spawner.spawn({ argv, cwd: ws, env, tty: false, stdin: 'closed' });
  const { status, text } = await runToEnd(child, 20_000);
  await cleanup?.();
  return { exitCode: status.exitCode, output: text };
}

describe("ux's own directories", () => {
  const script = () =>
    [
      `ls ${ensureUxRuntimeRoot()} && echo LISTED-ROOT`,
      `cat ${join(other, 'snapshot.sh')} && echo READ-OTHER`,
      `echo x > ${join(other, 'planted')} && echo WROTE-OTHER`,
      `rm -f ${join(other, 'snapshot.sh')} && echo REMOVED-OTHER`,
      `cat ${join(quarantine, 'taken')} && echo READ-QUARANTINE`,
      `echo x > ${join(quarantine, 'planted')} && echo WROTE-QUARANTINE`,
    ].join('; ');

  it('cannot list, read, write or remove in any runtime root or the quarantine (the host can: control)', async () => {
    const host = await run(backendA, script().replace(/rm -f [^;]*&& echo REMOVED-OTHER/, 'true'), {
      sandbox: false,
    });
    expect(host.output).toContain('READ-OTHER');
    expect(host.output).toContain('READ-QUARANTINE');
    rmSync(join(other, 'planted'), { force: true });
    rmSync(join(quarantine, 'planted'), { force: true });

    const inside = await run(backendA, script());
    for (const marker of [
      'LISTED-ROOT',
      'READ-OTHER',
      'WROTE-OTHER',
      'REMOVED-OTHER',
      'READ-QUARANTINE',
      'WROTE-QUARANTINE',
    ])
      expect(inside.output).not.toContain(marker);
    expect(inside.output).not.toContain('other-session');
    expect(inside.output).not.toContain('quarantined-secret');
    expect(existsSync(join(other, 'planted'))).toBe(false);
    expect(existsSync(join(quarantine, 'planted'))).toBe(false);
    expect(readFileSync(join(other, 'snapshot.sh'), 'utf8')).toContain('other-session');
  });

  it("cannot connect to another ux process's control socket (the host can: control)", async () => {
    const connect = `node -e "require('net').connect('${socketPath}').on('data',d=>process.stdout.write(d)).on('error',e=>{console.log(e.code);process.exit(3)})"`;
    const host = await run(backendA, connect, { sandbox: false });
    expect(host.output).toContain('control');
    expect(connections).toBe(1);
    const inside = await run(backendA, connect);
    expect(inside.output).not.toContain('control\n');
    expect(connections).toBe(1);
  });

  it('reads what the launch needs inside a hidden directory (hostPaths), and cannot change it', async () => {
    const result = await run(
      backendA,
      `. ${join(other, 'snapshot.sh')} && echo "sourced $SNAPSHOT"; echo x >> ${join(other, 'snapshot.sh')} && echo CHANGED; ls ${other} && echo LISTED`,
      { hostPaths: [join(other, 'snapshot.sh')] },
    );
    expect(result.output).toContain('sourced other-session');
    expect(result.output).not.toContain('CHANGED');
    expect(result.output).not.toContain('LISTED');
    expect(readFileSync(join(other, 'snapshot.sh'), 'utf8')).toBe('export SNAPSHOT=other-session\n');
  });

  it('refuses a policy that makes /tmp writable while the runtime root lies in it', async () => {
    const runtimeRoot = ensureUxRuntimeRoot();
    const plan = backendA.plan({
      argv: ['/bin/true'],
      cwd: ws,
      env: { PATH },
      policy: policy(false, true),
      tty: false,
    });
    // A checkout under /tmp (a CI clone) puts ux's own launcher inside the writable /tmp: that is
    // refused first, and is as much a reason as the runtime root.
    const launcherInTmp = fileURLToPath(import.meta.url).startsWith('/tmp/');
    const refusal = launcherInTmp
      ? /\/tmp\/ux-\d+ must stay unreadable|the host program \/tmp\/\S+ lies inside the writable root \/tmp:/
      : /\/tmp\/ux-\d+ must stay unreadable/;
    if (!runtimeRoot.startsWith('/tmp/') && !launcherInTmp) {
      // /run/user/<uid> exists here: a writable /tmp holds no runtime root of this process, unless the
      // fallback root exists too (then it is refused all the same).
      if (!existsSync(`/tmp/ux-${process.getuid?.()}`)) return void (await plan).cleanup?.();
    }
    const error = await plan.catch((caught: unknown) => caught);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).reason).toMatch(refusal);
  });
});

describe('the private /tmp', () => {
  it("is the session's own: writable through TMPDIR, shared by its commands; the host's /tmp is out of reach", async () => {
    const marker = join('/tmp', `ux-landlock-host-${process.pid}`);
    writeFileSync(marker, 'host-tmp-secret');
    try {
      const write = await run(
        backendA,
        `echo session-a > "$TMPDIR/shared" && echo "tmp=$TMPDIR"; cat ${marker}; echo x > /tmp/ux-landlock-new-${process.pid} && echo WROTE-HOST-TMP; ls /tmp && echo LISTED-TMP`,
      );
      expect(write.output).toMatch(/tmp=\//);
      expect(write.output).not.toContain('host-tmp-secret');
      expect(write.output).not.toContain('WROTE-HOST-TMP');
      expect(write.output).not.toContain('LISTED-TMP');
      expect(existsSync(`/tmp/ux-landlock-new-${process.pid}`)).toBe(false);
      const tmpA = /tmp=(\S+)/.exec(write.output)![1]!;
      expect(tmpA.startsWith(`${ensureUxRuntimeRoot()}/`)).toBe(true);
      // The next command of the session sees it; another session (backend B) does not.
      expect((await run(backendA, 'cat "$TMPDIR/shared"')).output).toContain('session-a');
      const b = await run(backendB, `cat "$TMPDIR/shared"; cat ${tmpA}/shared; echo "tmp=$TMPDIR"`);
      expect(b.output).not.toContain('session-a');
      expect(/tmp=(\S+)/.exec(b.output)![1]).not.toBe(tmpA);
      // Gone when the session ends.
      await backendA.close();
      expect(existsSync(tmpA)).toBe(false);
      expect(execFileSync('ls', ['-A', ensureUxRuntimeRoot()], { encoding: 'utf8' })).not.toContain(
        tmpA.split('/').at(-1),
      );
    } finally {
      rmSync(marker, { force: true });
    }
  });
});
