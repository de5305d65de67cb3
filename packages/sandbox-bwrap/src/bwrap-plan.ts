import { posix } from 'node:path';
import {
  type FsView,
  globToRegExp,
  InvalidArgumentsError,
  isUnder,
  MissingCommandLineError,
  resolveSandboxLayout,
  type SandboxLayout,
  type SandboxPlanRequest,
} from '@ux/protocol/core';
import type { GuardTarget } from './path-guard.js';

/** Readable system roots for policies that read `minimal` only. */
export const LINUX_MINIMAL_READ_ROOTS = [
  '/bin',
  '/sbin',
  '/usr',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/nix/store',
  '/run/current-system/sw',
];
/** How deep a deny-read glob is expanded below each root, and how many matches at most. */
export const GLOB_SCAN_DEFAULT_DEPTH = 4;
export const GLOB_SCAN_MAX_MATCHES = 8192;
/** The descriptor the seccomp program arrives on. */
export const SECCOMP_FD = 3;

/** What the planner needs to know about the host; all of it injected, so plans are deterministic. */
export interface BwrapHost {
  bwrapPath: string;
  /** The shell that prepares descriptors before bwrap starts: bash (closes any fd) or a POSIX sh. */
  shell: string;
  /** File holding the compiled seccomp program for this plan's network mode. */
  seccompFile: string;
  /** An empty file with mode 000, bound over deny-read files. */
  deniedFile: string;
  /**
   * `ux-sandbox-exec`, which bwrap runs in place of the command: it restores the default signal
   * dispositions the launcher took away from bwrap (see `LAUNCH_SCRIPT`), then runs the command.
   */
  execShim: string;
  /**
   * ux's own host directories (the seccomp programs, the quarantine): masked inside the sandbox when a
   * writable root holds them, so a command cannot rewrite the filter the next command starts with.
   */
  privateDirs?: readonly string[];
  fs: FsView;
  homeDir?: string;
  /** The bwrap build knows `--disable-userns` (0.8.0+). */
  disableUserns: boolean;
}

export interface BwrapPlan {
  argv: string[];
  env: Record<string, string>;
  /**
   * Missing protected names. bwrap could keep one from being created only by binding something over
   * it, which leaves a mount point on the host; instead the host watches each `dir` for its `name`
   * while the command runs and takes it away at once (`createPathGuard`). Each `dir` is a mount point
   * inside the sandbox, so it cannot be renamed away.
   */
  guardTargets: GuardTarget[];
  notes: string[];
  layout: SandboxLayout;
}

interface MountOp {
  dest: string;
  args: string[];
  /** Masks are remounted read-only after everything inside them is in place. */
  remountReadOnly?: boolean;
}

/**
 * The bwrap command for one request (spec sandbox-backends §2.2.2–2.2.3): read-only root (or only the
 * readable roots), a private /dev, writable roots with their protected carve-outs read-only, deny-read
 * masks, private user/pid/ipc/uts (and net) namespaces, no capabilities, a private /proc, the seccomp
 * program on fd 3. Pure: it only reads through `host.fs`.
 */
export function planBwrap(request: SandboxPlanRequest, host: BwrapHost): BwrapPlan {
  if (request.argv.length === 0) throw new MissingCommandLineError();
  if (!request.cwd.startsWith('/')) {
    throw new InvalidArgumentsError({
      tool: 'bwrap plan',
      issues: [{ path: 'cwd', message: `must be absolute, got "${request.cwd}"` }],
    });
  }
  const badFd = request.keepFds?.find((fd) => !Number.isInteger(fd) || fd < 10 || fd > 1023);
  if (badFd !== undefined) {
    throw new InvalidArgumentsError({
      tool: 'bwrap plan',
      issues: [
        {
          path: 'keepFds',
          message: `descriptors to keep must be whole numbers from 10 to 1023, got ${badFd}`,
        },
      ],
    });
  }

  const layout = resolveSandboxLayout(
    request.policy,
    {
      cwd: request.cwd,
      ...(request.projectRoots ? { projectRoots: request.projectRoots } : {}),
      ...(request.env.TMPDIR ? { tmpdir: request.env.TMPDIR } : {}),
      ...(host.homeDir ? { homeDir: host.homeDir } : {}),
      minimalRoots: LINUX_MINIMAL_READ_ROOTS,
    },
    host.fs,
    host.homeDir ? { homeDir: host.homeDir } : {},
  );
  const notes: string[] = [];
  const guardTargets: GuardTarget[] = [];
  const ops: MountOp[] = [];
  const writableRoots = layout.writableRoots.map((root) => root.root);
  const fullWrite = writableRoots.includes('/');
  const pinned = new Set<string>();
  // A directory holding protected entries, or watched for a missing one, is bound onto itself, and so
  // is every directory between it and the writable root: a mount point cannot be renamed or removed
  // (EBUSY), so neither `mv .git elsewhere` nor `mv .git/worktrees elsewhere` can swap in a directory
  // with other hooks, config or pointers, and a watched directory stays the one being watched. (The
  // parent of a mount point can be renamed, which is why pinning only the innermost one is not enough.)
  const pin = (dir: string, root: string) => {
    for (let at = dir; at !== root && isUnder(at, root); at = posix.dirname(at)) {
      if (pinned.has(at) || host.fs.kind(at) !== 'dir') continue;
      pinned.add(at);
      ops.push({ dest: at, args: ['--bind', at, at] });
    }
  };

  for (const { root, readOnly } of layout.writableRoots) {
    ops.push({ dest: root, args: ['--bind', root, root] });
    for (const carve of readOnly) {
      if (carve.kind === 'file' || carve.kind === 'dir') {
        pin(posix.dirname(carve.path), root);
        ops.push({ dest: carve.path, args: ['--ro-bind', carve.path, carve.path] });
      } else if (carve.kind === 'symlink') {
        const target = host.fs.realpath(carve.path);
        if (target && writableRoots.some((w) => isUnder(target, w)))
          ops.push({ dest: target, args: ['--ro-bind', target, target] });
        notes.push(
          `${carve.path} is a symbolic link: what it points to is read-only, the link itself can be replaced`,
        );
      } else {
        // Missing: nothing is bound (that would leave a file on the host); the host watches for it.
        // Outside every writable root (a linked worktree's repository, say) it cannot be created.
        const owner = [...writableRoots].reverse().find((w) => isUnder(carve.path, w));
        const missing = owner && firstMissing(carve.path, owner, host.fs);
        if (!owner || !missing) continue;
        const dir = posix.dirname(missing);
        const name = posix.basename(missing);
        // Below a file nothing can be created at all.
        if (host.fs.kind(dir) !== 'dir') continue;
        if (!guardTargets.some((t) => t.dir === dir && t.name === name))
          guardTargets.push({ dir, name, why: carve.why });
        pin(dir, owner);
      }
    }
  }

  const denied = [
    ...layout.unreadable,
    ...expandGlobs(
      layout.unreadableGlobs,
      [request.cwd, ...writableRoots, ...globBases(layout.unreadableGlobs)],
      host.fs,
      notes,
    ),
  ];
  for (const path of [...new Set(denied)]) {
    const kind = host.fs.kind(path);
    const insideWritable = writableRoots.some((w) => isUnder(path, w));
    if (kind === 'dir') {
      // Descendants that must stay reachable (writable or readable roots) need the mask traversable.
      const traversable = [...writableRoots, ...layout.readableRoots].some(
        (other) => other !== path && isUnder(other, path),
      );
      ops.push({
        dest: path,
        args: ['--perms', traversable ? '0111' : '0000', '--tmpfs', path],
        remountReadOnly: true,
      });
    } else if (kind !== undefined) {
      ops.push({ dest: path, args: ['--ro-bind', host.deniedFile, path] });
    } else if (insideWritable) {
      // Masking it would leave a mount point on the host; a file that does not exist holds no secret.
      notes.push(
        `deny-read path ${path} does not exist: it is not hidden if it is created while the command runs`,
      );
    }
  }

  // Parents before children: a mask or bind over a directory must not hide mounts made inside it.
  const ordered = ops
    .map((op, index) => ({ op, index }))
    .sort((a, b) => depth(a.op.dest) - depth(b.op.dest) || a.index - b.index)
    .map(({ op }) => op);

  // No --new-session: the command must stay in the process group (and, with a terminal, the
  // foreground group) the door signals, or Ctrl-C would never reach it. The spawner already gives the
  // launch a session of its own, and seccomp refuses TIOCSTI, the reason bwrap offers the flag.
  const bwrap: string[] = [host.bwrapPath, '--die-with-parent', '--unshare-user'];
  if (host.disableUserns) bwrap.push('--disable-userns');
  bwrap.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (layout.network === 'restricted') bwrap.push('--unshare-net');
  if (fullWrite) bwrap.push('--bind', '/', '/');
  else if (layout.readAll) bwrap.push('--ro-bind', '/', '/');
  else {
    bwrap.push('--tmpfs', '/');
    for (const root of layout.readableRoots) bwrap.push('--ro-bind', root, root);
  }
  bwrap.push('--dev', '/dev');
  for (const op of ordered) if (!(fullWrite && op.dest === '/')) bwrap.push(...op.args);
  for (const op of ordered) if (op.remountReadOnly) bwrap.push('--remount-ro', op.dest);
  // The sandbox's root is uid 0 when ux runs as root: files of /proc that only check ownership (kernel
  // tunables, the sysrq trigger) must be read-only, or a command could change the host's kernel.
  bwrap.push('--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  if (host.fs.kind('/proc/sysrq-trigger') !== undefined)
    bwrap.push('--ro-bind', '/dev/null', '/proc/sysrq-trigger');
  // The shim is bound read-only at its own path: visible under restricted reads, unchangeable when it
  // lies inside a writable root.
  bwrap.push('--ro-bind', host.execShim, host.execShim);
  // The zsh fork's execve wrapper must stay visible under restricted reads: the patched zsh refuses to
  // run a program it cannot hand to the wrapper, so a hidden wrapper would stop every command.
  const wrapper = request.env.EXEC_WRAPPER;
  if (!fullWrite && !layout.readAll && wrapper?.startsWith('/') && host.fs.kind(wrapper) === 'file')
    bwrap.push('--ro-bind', wrapper, wrapper);
  for (const dir of host.privateDirs ?? []) {
    if (host.fs.kind(dir) === 'dir' && writableRoots.some((w) => isUnder(dir, w)))
      bwrap.push('--perms', '0000', '--tmpfs', dir, '--remount-ro', dir);
  }
  bwrap.push(
    '--cap-drop',
    'ALL',
    '--chdir',
    request.cwd,
    '--seccomp',
    String(SECCOMP_FD),
    '--',
    host.execShim,
    ...request.argv,
  );

  const env: Record<string, string> = { ...request.env, UX_SANDBOX: 'bwrap' };
  if (layout.network === 'restricted') env.UX_SANDBOX_NETWORK_DISABLED = '1';
  if (layout.missingWritableRoots.length > 0) {
    notes.push(`writable roots that do not exist were skipped: ${layout.missingWritableRoots.join(', ')}`);
  }
  const keepFds = [...new Set(request.keepFds ?? [])].sort((a, b) => a - b);
  const script = keepFds.length > 0 ? launchScript(keepFds) : LAUNCH_SCRIPT;
  const argv = [host.shell, '-c', script, 'ux-bwrap', host.seccompFile, ...bwrap];
  return { argv, env, guardTargets, notes, layout };
}

/**
 * Runs before bwrap. First it makes bwrap ignore SIGHUP, SIGINT, SIGQUIT and SIGTERM: they are sent to
 * the whole process group (or the terminal's foreground group), and bwrap, which would die of them and
 * take the sandbox with it, must stay until the command has handled them and exited (`ux-sandbox-exec`
 * gives the command its default dispositions back). Then it closes every inherited descriptor above
 * stderr (bwrap passes them all into the sandbox, and an open descriptor to a file outside is a way out
 * no mount can stop), except those the request's `keepFds` names (see `launchScript`), and opens the seccomp program on fd 3. Closing descriptors above 9 needs bash (or
 * busybox ash); a shell that cannot fails here, and the sandbox does not start.
 */
export const LAUNCH_SCRIPT = launchScript([]);

/**
 * `LAUNCH_SCRIPT` that also keeps the descriptors in `keepFds` (the request's `keepFds`, checked by
 * `planBwrap`: whole numbers from 10 to 1023) open for bwrap, which passes them into the sandbox.
 */
export function launchScript(keepFds: readonly number[]): string {
  const kept = ['0', '1', '2', ...keepFds.map(String)].join('|');
  return `trap '' HUP INT QUIT TERM; for fd in /proc/self/fd/*; do n=\${fd##*/}; case $n in ${kept}) ;; *) eval "exec $n>&-" 2>/dev/null ;; esac; done; exec ${SECCOMP_FD}<"$1" && shift && exec "$@"`;
}

/** The shallowest component of `path` below `root` that does not exist. */
function firstMissing(path: string, root: string, fs: FsView): string | undefined {
  const parts = posix.relative(root, path).split('/');
  let current = root;
  for (const part of parts) {
    current = posix.join(current, part);
    if (fs.kind(current) === undefined) return current;
  }
  return undefined;
}

/**
 * The directory each glob's literal part names (`/home/u/.ssh` for `/home/u/.ssh/*.pem`): its matches
 * may lie outside the cwd and writable roots. `/` itself is left out, too wide to scan.
 */
function globBases(patterns: readonly string[]): string[] {
  return patterns.flatMap((pattern) => {
    const parts = pattern.split('/');
    const literal = parts.findIndex((part) => /[*?[\\]/.test(part));
    const base = parts.slice(0, literal === -1 ? parts.length - 1 : literal).join('/');
    return base === '' ? [] : [base];
  });
}

/** Existing matches of deny-read globs under the given roots, breadth-first, bounded. */
function expandGlobs(
  patterns: readonly string[],
  roots: readonly string[],
  fs: FsView,
  notes: string[],
): string[] {
  if (patterns.length === 0) return [];
  const regexps = patterns.map((pattern) => globToRegExp(pattern));
  const matches = new Set<string>();
  const seen = new Set<string>();
  let budget = GLOB_SCAN_MAX_MATCHES;
  for (const root of roots) {
    let level = [root];
    for (let d = 0; d <= GLOB_SCAN_DEFAULT_DEPTH && level.length > 0; d++) {
      const next: string[] = [];
      for (const directory of level) {
        if (seen.has(directory)) continue;
        seen.add(directory);
        for (const name of fs.readdir(directory)) {
          if (name === '.git' || name === 'node_modules') continue;
          const path = posix.join(directory, name);
          if (regexps.some((regexp) => regexp.test(path))) {
            matches.add(path);
            if (--budget === 0) {
              notes.push(
                `deny-read globs matched more than ${GLOB_SCAN_MAX_MATCHES} paths; only those were hidden`,
              );
              return [...matches];
            }
          } else if (fs.kind(path) === 'dir') next.push(path);
        }
      }
      level = next;
    }
  }
  if (patterns.length > 0) {
    notes.push(
      `deny-read globs hide the ${matches.size} matches that existed at start (${GLOB_SCAN_DEFAULT_DEPTH} levels deep); files created later are not hidden`,
    );
  }
  return [...matches];
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}
