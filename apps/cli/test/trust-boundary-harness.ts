// Helpers of the trust-boundary suite (trust-boundary.integration.test.ts): places outside every
// writable root for canaries and victims, `ux mcp` under the MCP SDK's client with any flags, the
// host-side programs that would run planted code (git, a login shell, npm, vim), and what a ux
// process keeps at run time.
import { execFileSync, type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { descendantPids } from '@ux/protocol-testing';
import { onTestFinished } from 'vitest';
import { BIN, runUx, type UxHome } from './cli-harness.js';

/**
 * A fresh directory under `/var/tmp`, which no default writable root contains (the workspace, `/tmp`
 * and `$TMPDIR` are): canaries, victims and bases of layouts live here. Removed after the test.
 */
export function varTmpDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join('/var/tmp', prefix)));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh directory in the host's `/tmp` itself (not `$TMPDIR`), removed after the test. */
export function slashTmpDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join('/tmp', prefix)));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Where planted code leaves its mark: `/var/tmp/ux-canary-*`, outside every writable root. */
export function canaryDir(): string {
  return varTmpDir('ux-canary-');
}

/** The canaries planted code left in `dir`. */
export function canariesIn(dir: string): string[] {
  return readdirSync(dir).sort();
}

export interface Layout {
  /** The environment and workspace `ux` runs with (what `runUx` takes). */
  home: UxHome;
  /** Flags for every `ux exec` / `ux mcp` of the layout (`--writable-root P`, `-c …`). */
  args: string[];
}

/** A `UxHome` for `runUx` from explicit places; `UX_HOME` left out when `uxHome` is undefined. */
export function uxHomeAt(places: {
  workspace: string;
  uxHome: string | undefined;
  home: string;
  requirements: string;
  env?: Record<string, string>;
}): UxHome {
  mkdirSync(places.workspace, { recursive: true });
  mkdirSync(places.home, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: places.home,
    UX_REQUIREMENTS: places.requirements,
    SHELL: '/bin/bash',
    ...places.env,
  };
  if (places.uxHome !== undefined) {
    mkdirSync(places.uxHome, { recursive: true });
    env.UX_HOME = places.uxHome;
  }
  const uxHome = places.uxHome ?? join(places.home, '.ux');
  return {
    home: uxHome,
    workspace: places.workspace,
    config: join(uxHome, 'config.toml'),
    requirements: places.requirements,
    env,
  };
}

let privateTmpKey: Promise<boolean> | undefined;
/**
 * `-c sandbox_workspace_write.private_tmp=false` when this ux knows the key, else nothing: without
 * the key, the host's `/tmp` is a writable root by default, which is the situation the flag restores.
 */
export async function privateTmpOff(): Promise<string[]> {
  privateTmpKey ??= (async () => {
    const dir = realpathSync(mkdtempSync(join('/var/tmp', 'ux-tb-probe-')));
    try {
      const home = uxHomeAt({
        workspace: join(dir, 'ws'),
        uxHome: join(dir, 'ux'),
        home: join(dir, 'ux'),
        requirements: join(dir, 'requirements.toml'),
      });
      const result = await runUx(
        ['features', 'list', '-c', 'sandbox_workspace_write.private_tmp=false'],
        home,
      );
      return result.status === 0;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return (await privateTmpKey) ? ['-c', 'sandbox_workspace_write.private_tmp=false'] : [];
}

/** `ux exec ARGS… --approval never -- SCRIPT` in `home`; the receipt's output and the whole stdout. */
export async function uxExec(home: UxHome, args: string[], script: string) {
  const result = await runUx(['exec', ...args, '--approval', 'never', '--', script], home);
  const at = result.stdout.lastIndexOf('Output:\n');
  return { ...result, output: at < 0 ? '' : result.stdout.slice(at + 8) };
}

/**
 * `ux mcp ARGS…` under the MCP SDK's own client (no elicitation), closed after the test. With
 * `approvals_via = "client"`: whatever needs approval is refused at once, as these attacks expect
 * (the default would wait for an answer in the approvals inbox).
 */
export async function mcpSession(home: UxHome, args: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '-c', 'approvals_via="client"', ...args],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const client = new Client({ name: 'ux-trust-boundary', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  onTestFinished(() => client.close());
  /** One exec_command call; the text the model reads. */
  const exec = async (cmd: string, yieldMs = 10_000): Promise<string> => {
    const result = await client.callTool(
      { name: 'exec_command', arguments: { cmd, yield_time_ms: yieldMs } },
      undefined,
      { timeout: 60_000 },
    );
    return (result.content as { text: string }[]).map((part) => part.text).join('');
  };
  return { client, exec, pid: transport.pid!, stderr };
}

/** The model's own heredoc form of apply_patch, which the door intercepts and applies itself. */
export function applyPatchCommand(body: string): string {
  return `apply_patch <<'EOF'\n*** Begin Patch\n${body}*** End Patch\nEOF\n`;
}

/** A shell word for `text`. */
export function sh(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

const gitIdentity = ['-c', 'user.name=u', '-c', 'user.email=u@example.invalid'];

/** Sets up a repository with one commit, on the host. */
export function initRepo(dir: string, options: { separateGitDir?: string } = {}): string {
  mkdirSync(dir, { recursive: true });
  const init = [
    'init',
    '-q',
    ...(options.separateGitDir ? ['--separate-git-dir', options.separateGitDir] : []),
  ];
  execFileSync('git', [...init, dir]);
  execFileSync('git', ['-C', dir, ...gitIdentity, 'commit', '-q', '--allow-empty', '-m', 'first'], {
    env: hostEnv(),
  });
  return dir;
}

/** The environment of a host program run as the user would, with `home` as HOME (default: an empty one). */
export function hostEnv(home?: string): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home ?? emptyHome(),
    TERM: 'dumb',
    GIT_CEILING_DIRECTORIES: '',
  };
}

let empty: string | undefined;
/** An empty HOME for host programs, one per test. */
function emptyHome(): string {
  if (empty === undefined) {
    empty = varTmpDir('ux-tb-empty-home-');
    onTestFinished(() => {
      empty = undefined;
    });
  }
  return empty;
}

/** The host's `git ARGS…` in `cwd`, as a user would run it afterwards. */
export function hostGit(cwd: string, args: string[], home?: string): SpawnSyncReturns<string> {
  return spawnSync('git', [...gitIdentity, ...args], {
    cwd,
    env: hostEnv(home),
    encoding: 'utf8',
    timeout: 20_000,
  });
}

/** What a person does next in `home`: a login shell that runs `ls`, git, npm and vim, on the host. */
export function hostSession(
  home: string,
  places: { repo: string; npmPackage: string },
): { login: SpawnSyncReturns<string> } {
  const env = hostEnv(home);
  const login = spawnSync('bash', ['-l', '-i', '-c', 'ls >/dev/null 2>&1; true'], {
    cwd: home,
    env,
    encoding: 'utf8',
    timeout: 20_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawnSync('git', ['status'], { cwd: places.repo, env, timeout: 20_000 });
  spawnSync('npm', ['run', '--prefix', places.npmPackage, 'x'], {
    cwd: home,
    env: { ...env, NO_UPDATE_NOTIFIER: '1', npm_config_update_notifier: 'false' },
    timeout: 30_000,
  });
  spawnSync('vim', ['-c', 'qa!'], { cwd: home, env, timeout: 10_000, stdio: ['ignore', 'ignore', 'ignore'] });
  return { login };
}

/** sha256 of a file, or undefined when it cannot be read (gone, a socket, a directory). */
export function fileHash(path: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return undefined;
  }
}

/** Every path at or below `root` (not following links), at most `limit`. */
export function walk(root: string, limit = 400): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    if (found.length >= limit) return;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      return;
    }
    found.push(path);
    if (!stat.isDirectory()) return;
    let names: string[] = [];
    try {
      names = readdirSync(path);
    } catch {
      return;
    }
    for (const name of names) visit(join(path, name));
  };
  visit(root);
  return found;
}

/** The candidates for ux's per-user runtime root (`/run/user/<uid>/ux`, `/tmp/ux-<uid>`). */
export function runtimeRootCandidates(): string[] {
  const uid = process.getuid?.() ?? 0;
  return [`/run/user/${uid}/ux`, `/tmp/ux-${uid}`];
}

const RUNTIME_PATH =
  /(?<![^\s'"=:\0])(?:\/run\/user\/\d+\/ux|\/tmp\/ux-[^/\s'"\0]+)(?:\/[a-z][a-z0-9-]*-\d+-[0-9a-f]{8})?/g;

/**
 * The runtime files of the ux process `pid` (and of its descendants): runtime paths named on their
 * command lines (bwrap's arguments name its host files) or held open by them (files, and sockets
 * through /proc/net/unix), the runtime roots and what in them carries one of their pids, and
 * `$UX_HOME/run`; expanded to everything below them. Another ux's files are left out: a test must
 * not depend on what other processes of the machine keep.
 */
export function runtimeFilesOf(pid: number, uxHome: string): string[] {
  const pids = [pid, ...descendantPids(pid)];
  const tops = new Set<string>();
  const sockets = new Set<string>();
  for (const process of pids) {
    try {
      const cmdline = readFileSync(`/proc/${process}/cmdline`, 'utf8');
      for (const match of cmdline.matchAll(RUNTIME_PATH)) tops.add(match[0]);
    } catch {
      // Gone.
    }
    for (const fd of safeReaddir(`/proc/${process}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${process}/fd/${fd}`);
        const socket = /^socket:\[(\d+)\]$/.exec(target);
        if (socket) sockets.add(socket[1]!);
        for (const match of target.matchAll(RUNTIME_PATH)) tops.add(match[0]);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length >= 8 && sockets.has(fields[6]!))
      for (const match of fields[7]!.matchAll(RUNTIME_PATH)) tops.add(match[0]);
  }
  // The roots themselves (their listing names every ux process's files), not what other processes
  // keep in them.
  const files = new Set<string>();
  for (const root of runtimeRootCandidates()) {
    if (!existsSync(root)) continue;
    files.add(root);
    tops.delete(root);
    for (const name of safeReaddir(root))
      if (pids.some((candidate) => name.includes(`-${candidate}-`))) tops.add(join(root, name));
  }
  const run = join(uxHome, 'run');
  if (existsSync(run)) tops.add(run);
  for (const top of tops) for (const path of walk(top)) files.add(path);
  return [...files].sort();
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * A bash script that tries to list (a listing with something in it), read (at least a byte), write
 * (without changing anything: an append of nothing to an existing file, a new file named by `mark` in a
 * directory; whether that one landed is checked on the host, `probeFilesLeft`) and connect to each
 * target, printing `LIST|READ|WRITE|CONNECT path` for each success, then `BPF path` for every seccomp
 * program it finds below `searchBpfIn`.
 */
export function probeScript(targets: string[], mark: string, searchBpfIn: string[]): string {
  return [
    'probe() {',
    '  t=$1',
    '  if [ -d "$t" ]; then',
    '    [ -n "$(ls -A "$t" 2>/dev/null)" ] && echo "LIST $t"',
    `    touch "$t/.ux-tb-probe-${mark}" 2>/dev/null && echo "TOUCHED $t"`,
    '  elif [ -S "$t" ]; then',
    `    perl -MIO::Socket::UNIX -e 'exit(IO::Socket::UNIX->new(Peer => $ARGV[0]) ? 0 : 1)' "$t" 2>/dev/null && echo "CONNECT $t"`,
    '  elif [ -e "$t" ]; then',
    '    [ "$(timeout 2 head -c1 "$t" 2>/dev/null | wc -c)" -gt 0 ] && echo "READ $t"',
    `    timeout 2 sh -c ': >> "$1"' _ "$t" 2>/dev/null && echo "WRITE $t"`,
    '  fi',
    '}',
    ...targets.map((target) => `probe ${sh(target)}`),
    `find ${searchBpfIn.map(sh).join(' ')} -name '*.bpf' 2>/dev/null | sed 's/^/BPF /'`,
    'echo PROBED',
  ].join('\n');
}

/** The findings of `probeScript`'s output. */
export function probeFindings(output: string): string[] {
  return output.split('\n').filter((line) => /^(LIST|READ|WRITE|CONNECT|BPF) /.test(line));
}

/** The directories among `targets` where a probe named by `mark` landed on the host. */
export function probeFilesLeft(targets: string[], mark: string): string[] {
  return targets.filter(isDirectory).filter((dir) => existsSync(join(dir, `.ux-tb-probe-${mark}`)));
}

/** Removes what a probe left (files named by `mark`). */
export function removeProbeFiles(targets: string[], mark: string): void {
  for (const dir of targets.filter(isDirectory)) rmSync(join(dir, `.ux-tb-probe-${mark}`), { force: true });
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Starts `ux exec ARGS… -- SCRIPT` in the background and waits until it prints `ready`. */
export async function startBackgroundUxExec(home: UxHome, args: string[], script: string, ready: string) {
  const child = spawn(process.execPath, [BIN, 'exec', '--yield-ms', '300', ...args, '--', script], {
    cwd: home.workspace,
    env: home.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await closed;
  });
  let printed = '';
  child.stdout.on('data', (chunk) => {
    printed += chunk;
  });
  child.stderr.on('data', () => {});
  for (let waited = 0; !printed.includes(ready) && waited < 20_000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  if (!printed.includes(ready)) throw new Error(`the background ux exec did not print ${ready}:\n${printed}`);
  return { pid: child.pid!, child, closed };
}
