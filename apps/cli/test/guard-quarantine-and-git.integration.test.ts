// The path guard through the built `ux exec` with the default sandbox (real bubblewrap): what it takes
// into the quarantine is sealed and bounded, and a sandboxed `git init` works
// without an escalation while the new repository's configuration surface is checked after the command.
// Each attack has a control that shows it works where nothing stops it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const IDENTITY = ['-c', 'user.name=u', '-c', 'user.email=u@example.invalid'];
/** A person's git on the host: no global or system configuration of this machine. */
const HOST_GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CEILING_DIRECTORIES: '',
};
const hostGit = (cwd: string, ...args: string[]) =>
  spawnSync('git', [...IDENTITY, ...args], { cwd, env: HOST_GIT_ENV, encoding: 'utf8' });

/** The lines ux printed about the sandbox (each notice is one `Sandbox: …` line of the receipt). */
const sandboxLines = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('Sandbox: '));
/** The output of the receipt. */
const output = (stdout: string) => stdout.slice(stdout.lastIndexOf('Output:\n') + 8).replace(/\n$/, '');

/** Every path below `dir`, relative, sorted. */
function treeOf(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string, prefix: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      found.push(rel);
      if (entry.isDirectory()) walk(join(at, entry.name), rel);
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return found.sort();
}

/** A file in /var/tmp that only a program running on the host could create (the sandbox cannot write there). */
function canary(): string {
  const path = `/var/tmp/ux-PWNED-${process.pid}-${Math.random().toString(36).slice(2)}`;
  onTestFinished(() => rmSync(path, { force: true }));
  return path;
}

function startUx(home: UxHome, script: string): { done: Promise<{ status: number | null; stdout: string }> } {
  const child = spawn(process.execPath, [BIN, 'exec', '--approval', 'never', '--', script], {
    cwd: home.workspace,
    env: home.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.resume();
  return {
    done: new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout }))),
  };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A sandboxed command that gets its working directory inside `name` (made as `x`, renamed from
 * inside), then creates files there until the test makes `stop` in the workspace, counting its tries
 * in `progress` (absolute paths: its working directory may be gone from under it).
 */
const WRITER = (workspace: string, name: string) =>
  `mkdir x && cd x && : > before && mv ../x ../${name} || exit 9; n=0; while [ ! -e ${workspace}/stop ] && [ $n -lt 100000 ]; do touch f$RANDOM 2>/dev/null; n=$((n+1)); echo $n > ${workspace}/progress; done; echo tried $n`;

/** The writer's count of tries so far. */
function progress(workspace: string): number {
  try {
    return Number(readFileSync(join(workspace, 'progress'), 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

describe('the quarantine through ux exec', () => {
  it('control: a directory renamed away while the command writes inside it keeps receiving its files', async () => {
    const home = makeHome();
    const away = join(home.home, 'away');
    const ux = startUx(home, WRITER(home.workspace, '.not-protected'));
    await waitFor(() => existsSync(join(home.workspace, '.not-protected')), 'the directory');
    renameSync(join(home.workspace, '.not-protected'), away);
    const at = progress(home.workspace);
    await waitFor(() => progress(home.workspace) > at + 50, 'the command to go on writing');
    writeFileSync(join(home.workspace, 'stop'), '');
    const { stdout } = await ux.done;
    expect(output(stdout)).toMatch(/^tried \d+\n$/);
    expect(treeOf(away).filter((name) => name.startsWith('f')).length).toBeGreaterThan(20);
  });

  it('a command whose working directory is inside the .ux the guard took adds nothing to the quarantine', async () => {
    const home = makeHome();
    const quarantine = join(home.home, 'quarantine');
    const ux = startUx(home, WRITER(home.workspace, '.ux'));
    // Sealed: the entry is there and nothing is staged any more.
    await waitFor(
      () =>
        treeOf(quarantine).some((name) => /^\d{8}T\d{6}Z-\d+-\d+-\.ux$/.test(name)) &&
        !treeOf(quarantine).some((name) => name.startsWith('.incoming-')),
      'the .ux to be sealed in the quarantine',
    );
    const sealed = treeOf(quarantine).filter((name) => name !== 'quarantine.log');
    // The command goes on trying to write inside it, well after the seal.
    const at = progress(home.workspace);
    await waitFor(() => progress(home.workspace) > at + 50, 'the command to go on writing');
    expect(treeOf(quarantine).filter((name) => name !== 'quarantine.log')).toEqual(sealed);
    writeFileSync(join(home.workspace, 'stop'), '');
    const { status, stdout } = await ux.done;
    expect(status).toBe(0);
    expect(output(stdout)).toMatch(/^tried \d+\n$/);
    expect(treeOf(quarantine).filter((name) => name !== 'quarantine.log')).toEqual(sealed);
    expect(sealed.some((name) => name.endsWith('.ux/before'))).toBe(true);
    expect(sandboxLines(stdout)).toHaveLength(1);
    expect(sandboxLines(stdout)[0]).toMatch(/the command created .*\/workspace\/\.ux .* so ux moved it to /);
  });

  it('a loop that makes .codex 300 times leaves at most 64 entries, with one report of the excess', async () => {
    const home = makeHome();
    const quarantine = join(home.home, 'quarantine');
    const result = await runUx(
      [
        'exec',
        '--approval',
        'never',
        '--',
        'n=0; while [ $n -lt 300 ]; do mkdir .codex 2>/dev/null && n=$((n+1)); done; echo made $n',
      ],
      home,
    );
    expect(output(result.stdout)).toBe('made 300\n');
    const entries = readdirSync(quarantine).filter((name) => name !== 'quarantine.log');
    expect(entries).toHaveLength(64);
    const lines = sandboxLines(result.stdout);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/the command created .*\/\.codex /);
    expect(lines[1]).toBe(
      `Sandbox: the quarantine (${quarantine}) keeps at most 64 entries and 64 MiB; to make room for what this command created, ux removed its 236 oldest entries (0 MiB).`,
    );
  });
});

describe('git in the sandbox', () => {
  it('git init, add and commit: no escalation, no notice, and the new repository is protected from the next command on', async () => {
    const home = makeHome();
    const ws = home.workspace;
    const result = await runUx(
      [
        'exec',
        '--approval',
        'never',
        '--',
        `echo hi > README && git init -q && git add -A && git ${IDENTITY.join(' ')} commit -qm x && git log --format=%s`,
      ],
      home,
    );
    expect(result.status, result.stdout).toBe(0);
    expect(output(result.stdout)).toBe('x\n');
    expect(sandboxLines(result.stdout)).toEqual([]);
    expect(treeOf(join(home.home, 'quarantine'))).toEqual([]);
    expect(hostGit(ws, 'log', '--format=%s').stdout).toBe('x\n');

    // The next command's plan binds its config read-only, as for any repository.
    const next = await runUx(
      ['exec', '--approval', 'never', '--', 'git config core.fsmonitor "touch /tmp/x"; echo status $?'],
      home,
    );
    expect(output(next.stdout)).toMatch(/status [1-9]\n$/);
    expect(hostGit(ws, 'config', 'core.fsmonitor').stdout).toBe('');
  });

  it('git init + core.fsmonitor: the config loses it, the host git status runs nothing, one notice (control: made on the host, it runs)', async () => {
    const mark = canary();
    const script = `git init -q && git config core.fsmonitor 'touch ${mark}'`;

    // Control: the same repository made on the host runs the fsmonitor at the host's next git status.
    const control = makeHome();
    execFileSync('bash', ['-c', script], { cwd: control.workspace, env: HOST_GIT_ENV });
    hostGit(control.workspace, 'status');
    expect(existsSync(mark), 'the control repository did not run its fsmonitor').toBe(true);
    rmSync(mark);

    const home = makeHome();
    const result = await runUx(['exec', '--approval', 'never', '--', script], home);
    expect(result.status, result.stdout).toBe(0);
    expect(readFileSync(join(home.workspace, '.git', 'config'), 'utf8')).not.toMatch(/fsmonitor/);
    hostGit(home.workspace, 'status');
    expect(existsSync(mark), "the host's git status ran the command's fsmonitor").toBe(false);
    const lines = sandboxLines(result.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Sandbox: the command created the git repository .*\/workspace\/\.git with config \(core\.fsmonitor\): .* ux moved it to (\S+), and wrote a config with only git's own settings in its place\. /,
    );
    const entry = /ux moved it to (\S+),/.exec(lines[0]!)![1]!;
    expect(readFileSync(join(entry, 'config'), 'utf8')).toContain(`fsmonitor = touch ${mark}`);
  });

  it('a planted hooks/pre-commit is quarantined: the host commit does not run it', async () => {
    const mark = canary();
    const home = makeHome();
    const result = await runUx(
      [
        'exec',
        '--approval',
        'never',
        '--',
        `git init -q && printf '#!/bin/sh\\ntouch ${mark}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
      ],
      home,
    );
    expect(result.status, result.stdout).toBe(0);
    expect(existsSync(join(home.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    const lines = sandboxLines(result.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/with hooks\/pre-commit: /);
    const entry = /ux moved it to (\S+)\./.exec(lines[0]!)![1]!;
    expect(statSync(join(entry, 'hooks', 'pre-commit')).mode & 0o111).toBe(0);
    const commit = hostGit(home.workspace, 'commit', '-q', '--allow-empty', '-m', 'host');
    expect(commit.status, commit.stderr).toBe(0);
    expect(existsSync(mark), "the host's git commit ran the command's hook").toBe(false);
  });

  it('a repository cloned into a folder nobody watched (vendor/x) is checked too', async () => {
    const mark = canary();
    const home = makeHome();
    // Outside /tmp: commands have a private /tmp, where a source under the host's /tmp is not.
    const source = realpathSync(mkdtempSync(join('/var/tmp', 'ux-clone-source-')));
    onTestFinished(() => rmSync(source, { recursive: true, force: true }));
    hostGit(source, 'init', '-q');
    hostGit(source, 'commit', '-q', '--allow-empty', '-m', 'first');
    const result = await runUx(
      [
        'exec',
        '--approval',
        'never',
        '--',
        `git clone -q ${source} vendor/x && git -C vendor/x config core.fsmonitor 'touch ${mark}' && git clone -q ${source} vendor/clean`,
      ],
      home,
    );
    expect(result.status, result.stdout).toBe(0);
    const lines = sandboxLines(result.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /the git repository .*\/workspace\/vendor\/x\/\.git with config \(core\.fsmonitor\)/,
    );
    hostGit(join(home.workspace, 'vendor', 'x'), 'status');
    expect(existsSync(mark)).toBe(false);
    expect(hostGit(join(home.workspace, 'vendor', 'x'), 'config', 'remote.origin.url').stdout).toBe(
      `${source}\n`,
    );
  });
});
