import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EffectivePolicy, FileSystemEntry } from '@ux/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSeatbeltSandbox } from './seatbelt-sandbox.js';

// These run sandbox-exec for real, so they need macOS; elsewhere they are reported as skipped.
const onMac = process.platform === 'darwin';

function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-seatbelt-')));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
  mkdirSync(join(dir, '.git', 'objects'), { recursive: true });
  writeFileSync(join(dir, '.git', 'config'), '[core]\n');
  return dir;
}

function policy(...more: FileSystemEntry[]): EffectivePolicy {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        ...more,
      ],
    },
    network: 'restricted',
  };
}

async function run(cwd: string, script: string, effective = policy()) {
  const backend = createSeatbeltSandbox({ hostEnv: {} });
  const plan = await backend.plan({
    argv: ['/bin/sh', '-c', script],
    cwd,
    env: { PATH: '/usr/bin:/bin' },
    policy: effective,
    tty: false,
  });
  const result = spawnSync(plan.argv[0]!, plan.argv.slice(1), {
    cwd: plan.cwd,
    env: plan.env,
    encoding: 'utf8',
  });
  await plan.cleanup?.();
  const output = `${result.stdout}${result.stderr}`;
  return {
    exitCode: result.status ?? 128,
    output,
    verdict: backend.classifyDenial?.({ exitCode: result.status ?? 128, output }),
  };
}

describe.skipIf(!onMac)('Seatbelt on a real Mac (macOS only)', () => {
  it('keeps .git/config and .git/hooks read-only while objects stay writable (macOS only)', async () => {
    const dir = workspace();
    const hook = await run(dir, 'echo evil > .git/hooks/pre-commit');
    expect(hook.exitCode).not.toBe(0);
    expect(hook.verdict).toBe('denied');
    expect(existsSync(join(dir, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect((await run(dir, 'echo x >> .git/config')).exitCode).not.toBe(0);
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect((await run(dir, 'echo blob > .git/objects/x')).exitCode).toBe(0);
  });

  it('blocks renaming .git away and creating a missing .codex (macOS only)', async () => {
    const dir = workspace();
    expect((await run(dir, 'mv .git moved')).exitCode).not.toBe(0);
    expect(existsSync(join(dir, '.git', 'config'))).toBe(true);
    expect((await run(dir, 'mkdir .codex')).exitCode).not.toBe(0);
    expect(existsSync(join(dir, '.codex'))).toBe(false);
  });

  it('keeps protected paths read-only in any letter case, and blocks creating them (macOS only)', async () => {
    // On the default case-insensitive volume these name the real .git and .codex; on a case-sensitive
    // one they name other (missing) paths and fail anyway, so the checks below hold on both.
    const dir = workspace();
    expect((await run(dir, 'echo evil > .GIT/hooks/pre-commit')).exitCode).not.toBe(0);
    expect(existsSync(join(dir, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect((await run(dir, 'echo x >> .Git/CONFIG')).exitCode).not.toBe(0);
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect((await run(dir, 'mkdir -p .CODEX/skills')).exitCode).not.toBe(0);
    expect(existsSync(join(dir, '.codex'))).toBe(false);
    expect((await run(dir, 'mv .GIT moved')).exitCode).not.toBe(0);
    expect(existsSync(join(dir, '.git', 'config'))).toBe(true);
    const allowed = await run(
      dir,
      'echo ok > .gitignore && mkdir -p .git/objects/ab && echo x > .git/objects/ab/cd',
    );
    expect(allowed.exitCode).toBe(0);
  });

  it('hides deny-read globs from reads and from renames (macOS only)', async () => {
    const dir = workspace();
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'conf', 'prod.env'), 'TOKEN=secret-value');
    const denied = policy({ path: { type: 'glob', pattern: '**/*.env' }, access: 'none' });
    const read = await run(dir, 'cat conf/prod.env', denied);
    expect(read.output).not.toContain('secret-value');
    expect((await run(dir, 'mv conf/prod.env conf/prod.txt', denied)).exitCode).not.toBe(0);
    expect((await run(dir, 'echo ok > conf/readme.txt', denied)).exitCode).toBe(0);
  });

  it('gives commands a private TMPDIR in place of /tmp and $TMPDIR, removed at close (macOS only)', async () => {
    const dir = workspace();
    const hostTmp = realpathSync(tmpdir());
    const privateTmp = join(hostTmp, `ux-seatbelt-private-${process.pid}-${Date.now()}`);
    onTestFinished(() => rmSync(privateTmp, { recursive: true, force: true }));
    const backend = createSeatbeltSandbox({ hostEnv: {}, privateTmpDir: privateTmp });
    const tmpPolicy: EffectivePolicy = {
      ...policy(
        { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
        { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
      ),
      privateTmp: true,
    };
    const sh = async (script: string) => {
      const plan = await backend.plan({
        argv: ['/bin/sh', '-c', script],
        cwd: dir,
        env: { PATH: '/usr/bin:/bin', TMPDIR: hostTmp },
        policy: tmpPolicy,
        tty: false,
      });
      return spawnSync(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: plan.env, encoding: 'utf8' });
    };
    const written = await sh('echo private > "$TMPDIR/x" && cat "$TMPDIR/x" && echo "$TMPDIR"');
    expect(written.status).toBe(0);
    expect(written.stdout).toContain('private');
    expect(readFileSync(join(privateTmp, 'x'), 'utf8')).toBe('private\n');
    const probe = `ux-seatbelt-probe-${process.pid}`;
    expect((await sh(`echo x > /tmp/${probe}`)).status).not.toBe(0);
    expect(existsSync(join('/tmp', probe))).toBe(false);
    expect((await sh(`echo x > '${hostTmp}/${probe}'`)).status).not.toBe(0);
    expect(existsSync(join(hostTmp, probe))).toBe(false);
    expect((await sh('echo ok > inside-the-workspace')).status).toBe(0);
    await backend.close?.();
    expect(existsSync(privateTmp)).toBe(false);
  });

  it("hides ux's directories from reads and writes, and keeps host paths in them readable (macOS only)", async () => {
    const dir = workspace();
    const hidden = join(dir, 'ux-runtime');
    mkdirSync(join(hidden, 'snap'), { recursive: true });
    writeFileSync(join(hidden, 'snap', 'zsh.sh'), 'echo from-snapshot\n');
    writeFileSync(join(hidden, 'secret'), 'runtime-secret');
    const backend = createSeatbeltSandbox({ hostEnv: {} });
    const sh = async (script: string) => {
      const plan = await backend.plan({
        argv: ['/bin/sh', '-c', script],
        cwd: dir,
        env: { PATH: '/usr/bin:/bin' },
        policy: { ...policy(), hostState: { hidden: [hidden] } },
        hostPaths: [join(hidden, 'snap', 'zsh.sh')],
        tty: false,
      });
      return spawnSync(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: plan.env, encoding: 'utf8' });
    };
    const read = await sh('cat ux-runtime/secret; ls ux-runtime');
    expect(`${read.stdout}${read.stderr}`).not.toContain('runtime-secret');
    expect(`${read.stdout}${read.stderr}`).not.toContain('snap');
    expect((await sh('echo x > ux-runtime/planted')).status).not.toBe(0);
    expect(existsSync(join(hidden, 'planted'))).toBe(false);
    expect((await sh('echo x > UX-RUNTIME/planted2')).status).not.toBe(0);
    expect((await sh('mv ux-runtime moved')).status).not.toBe(0);
    const sourced = await sh('. ux-runtime/snap/zsh.sh');
    expect(sourced.stdout).toContain('from-snapshot');
    expect((await sh('echo x >> ux-runtime/snap/zsh.sh')).status).not.toBe(0);
    await backend.close?.();
  });

  it('refuses a nested sandbox-exec inside the sandbox, and calls it a denial (macOS only)', async () => {
    const dir = workspace();
    const nested = await run(dir, "/usr/bin/sandbox-exec -p '(version 1)(allow default)' /usr/bin/true");
    expect(nested.exitCode).not.toBe(0);
    expect(nested.output).toContain('sandbox-exec:');
    expect(nested.verdict).toBe('denied');
  });
});
