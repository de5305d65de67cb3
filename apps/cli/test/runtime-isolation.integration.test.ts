// Two real ux processes: a sandboxed command of one cannot see, read or write the
// runtime directory of the other (where the seccomp programs used to be files it could rewrite), nor
// any per-user runtime root; each process's directory is gone when the process ends. Checked on the
// host, with the same script run outside the sandbox as the control.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '@ux/protocol-testing';
import { runtimeDirPid, uxRuntimeRoot, uxRuntimeRoots } from '@ux/protocol-utils';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeHome, runUx } from './cli-harness.js';

useLeakCheck();

const alive = (pid: number | undefined) => pid !== undefined && isAlive(pid);

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited++) {
    if (waited > 1000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('runtime files of another ux process', () => {
  it('a sandboxed command of one ux cannot reach the other’s runtime directory or any runtime root; both go at exit', async () => {
    const homeA = makeHome();
    const homeB = makeHome();
    // Process A: a sandboxed command that runs until the test lets it end.
    const a = spawn(
      process.execPath,
      [BIN, 'sandbox', '--', 'sh', '-c', 'touch ready; while [ ! -e stop ]; do sleep 0.05; done'],
      { cwd: homeA.workspace, env: homeA.env, stdio: 'ignore' },
    );
    const exited = new Promise<number | null>((resolve) => a.once('exit', (code) => resolve(code)));
    onTestFinished(async () => {
      if (a.exitCode === null && a.signalCode === null) a.kill('SIGKILL');
      await exited;
    });
    await until(() => existsSync(join(homeA.workspace, 'ready')), 'the first ux to start its command');
    const root = realpathSync(uxRuntimeRoot());
    const name = readdirSync(root).find((entry) => entry.startsWith(`bwrap-${a.pid}-`));
    expect(name).toBeDefined();
    const dirA = join(root, name!);
    const contents = () => readdirSync(dirA, { recursive: true, encoding: 'utf8' }).sort();
    const before = contents();
    expect(before.slice(0, 2)).toEqual(['denied', 'tmp']);
    // No seccomp program among A's runtime files: there is nothing to rewrite.
    expect(before.filter((entry) => /seccomp|\.bpf/.test(entry))).toEqual([]);

    const roots = uxRuntimeRoots().filter((path) => existsSync(path));
    const attack = [
      ...roots.map((r) => `ls -A '${r}' >/dev/null && echo "LISTED ${r}"`),
      `cat '${dirA}/denied' && echo READ`,
      `echo evil > '${dirA}/evil' && echo WROTE`,
      `mkdir '${dirA}/tmp/evil' && echo MKDIR`,
      'exit 0',
    ].join('; ');
    // The control: the same script outside any sandbox reaches A's directory.
    const control = spawnSync('/bin/sh', ['-c', attack], { encoding: 'utf8' });
    expect(control.stdout).toContain('WROTE');
    expect(control.stdout).toContain('MKDIR');
    rmSync(join(dirA, 'evil'));
    rmSync(join(dirA, 'tmp', 'evil'), { recursive: true });

    // Process B, a second ux: the same script under its sandbox.
    const listed = new Set(readdirSync(root));
    const b = await runUx(['sandbox', '--', 'sh', '-c', attack], homeB);
    expect(b.status).toBe(0);
    expect(b.stdout).not.toMatch(/LISTED|READ|WROTE|MKDIR/);
    // Hidden: behind a mask (Permission denied), or not there at all (the root lies in /tmp, which is
    // the session's private one).
    expect(b.stderr).toMatch(/Permission denied|No such file or directory/);
    expect(contents()).toEqual(before);
    // B's own directory went when B exited: nothing new is left by a process that is gone.
    const left = readdirSync(root).filter((entry) => !listed.has(entry) && !alive(runtimeDirPid(entry)));
    expect(left).toEqual([]);

    spawnSync('touch', [join(homeA.workspace, 'stop')]);
    expect(await exited).toBe(0);
    expect(existsSync(dirA)).toBe(false);
  });
});
