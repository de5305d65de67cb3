import { posix } from 'node:path';
import {
  type FsView,
  globToRegExp,
  InvalidArgumentsError,
  isUnder,
  MissingCommandLineError,
  PROXY_BRIDGE_PORT,
  proxyEnvironment,
  resolveSandboxLayout,
  type SandboxLayout,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import type { GuardTarget } from './path-guard.js';
import type { SeccompNetwork } from './seccomp/seccomp-program.js';

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

/** Which seccomp program a plan needs (`buildSeccompProgram`'s arguments). */
export interface SeccompFilterKind {
  network: SeccompNetwork;
  /** connect() goes to `ux-sandbox-exec`'s supervisor: the policy lists unix sockets. */
  superviseConnect: boolean;
}

/** What the planner needs to know about the host; all of it injected, so plans are deterministic. */
export interface BwrapHost {
  bwrapPath: string;
  /** The shell that prepares descriptors before bwrap starts: bash (closes any fd) or a POSIX sh. */
  shell: string;
  /**
   * File holding the compiled seccomp program for this plan: one file for every plan, or the file for
   * each kind of filter (the network mode, and whether connect() is supervised).
   */
  seccompFile: string | ((kind: SeccompFilterKind) => string);
  /**
   * Whether an existing path is a Unix socket (the proxy's, or one of `allowUnixSockets`). Default:
   * what `fs.kind` calls `other` (sockets, FIFOs, devices).
   */
  isSocket?: (path: string) => boolean;
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
 * The bwrap command for one request (docs/reference/sandbox.md §6; the order in docs/sandbox-bwrap.md):
 * read-only root (or only the readable roots), a private /dev, writable roots with their protected
 * carve-outs read-only, deny-read masks, private user/pid/ipc/uts (and net) namespaces, no capabilities,
 * a private /proc, the seccomp program on fd 3. Pure: it only reads through `host.fs`.
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
  const network = networkPlan(layout, host);
  const notes: string[] = [...network.notes];
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
        // A work tree's `.git`: a directory there (git init, git clone) is checked after the command.
        if (!guardTargets.some((t) => t.dir === dir && t.name === name))
          guardTargets.push({ dir, name, why: carve.why, ...(name === '.git' ? { repository: true } : {}) });
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
  // Proxied: the namespace has only loopback; the bridge inside is the one way to the proxy.
  if (layout.network !== 'enabled') bwrap.push('--unshare-net');
  if (fullWrite) bwrap.push('--bind', '/', '/');
  else if (layout.readAll) bwrap.push('--ro-bind', '/', '/');
  else {
    bwrap.push('--tmpfs', '/');
    for (const root of layout.readableRoots) bwrap.push('--ro-bind', root, root);
    // Merged-/usr systems: /bin, /lib64, … are symbolic links into /usr. The roots above are canonical,
    // so the links must be made too, or nothing runs (the ELF interpreter is /lib64/ld-linux-*.so).
    for (const link of LINUX_MINIMAL_READ_ROOTS) {
      if (host.fs.kind(link) !== 'symlink') continue;
      const target = host.fs.realpath(link);
      if (target && layout.readableRoots.some((root) => isUnder(target, root)))
        bwrap.push('--symlink', target, link);
    }
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
  // Last, so nothing above hides them: each socket at its own (real) path, which exists on the host.
  bwrap.push(...network.binds);
  bwrap.push('--cap-drop', 'ALL', '--chdir', request.cwd);
  // bwrap loads the filter unless a helper inside must keep what the command loses (the proxy bridge
  // connects to a unix socket, the supervisor makes connections): then ux-sandbox-exec is the
  // sandbox's init (--as-pid-1), forks the command and installs the filter in it just before the exec.
  // Not bwrap's own init: it would run without a filter, and the command, same uid, could write its
  // /proc/1/mem and make it do what the filter refuses; ux-sandbox-exec makes itself undumpable.
  if (network.shimArgs.length === 0) bwrap.push('--seccomp', String(SECCOMP_FD));
  else bwrap.push('--as-pid-1');
  bwrap.push('--', host.execShim, ...network.shimArgs, ...request.argv);

  const env: Record<string, string> = { ...request.env, UX_SANDBOX: 'bwrap', ...network.env };
  if (layout.network === 'restricted') env.UX_SANDBOX_NETWORK_DISABLED = '1';
  if (layout.missingWritableRoots.length > 0) {
    notes.push(`writable roots that do not exist were skipped: ${layout.missingWritableRoots.join(', ')}`);
  }
  const keepFds = [...new Set(request.keepFds ?? [])].sort((a, b) => a - b);
  const script = keepFds.length > 0 ? launchScript(keepFds) : LAUNCH_SCRIPT;
  const seccompFile =
    typeof host.seccompFile === 'string'
      ? host.seccompFile
      : host.seccompFile({ network: layout.network, superviseConnect: network.superviseConnect });
  const argv = [host.shell, '-c', script, 'ux-bwrap', seccompFile, ...bwrap];
  return { argv, env, guardTargets, notes, layout };
}

interface NetworkPlan {
  /** bwrap arguments binding unix sockets in (the proxy's, listed ones under restricted reads). */
  binds: string[];
  /** Options for `ux-sandbox-exec` before the command (ending with `--`), or none. */
  shimArgs: string[];
  env: Record<string, string>;
  notes: string[];
  superviseConnect: boolean;
}

/**
 * The network side of a plan: the proxy bridge for `proxied` (its socket bound in, the proxy variables
 * pointing at the bridge's loopback port), the connect supervisor for `allowUnixSockets`, and which
 * of bwrap and `ux-sandbox-exec` loads the filter.
 */
function networkPlan(layout: SandboxLayout, host: BwrapHost): NetworkPlan {
  const isSocket = host.isSocket ?? ((path: string) => host.fs.kind(path) === 'other');
  const plan: NetworkPlan = {
    binds: [],
    shimArgs: [],
    env: {},
    notes: [],
    superviseConnect: layout.allowUnixSockets.length > 0,
  };
  let proxySocket: string | undefined;
  if (layout.network === 'proxied') {
    const given = layout.networkProxy?.unixSocket ?? '';
    const real = host.fs.realpath(given);
    if (!real || !isSocket(real)) {
      throw new SandboxUnavailableError({
        backend: 'bwrap',
        reason: `network "proxied" needs the network proxy's socket, and ${given} ${real ? 'is not a socket' : 'does not exist'}`,
        fix: 'start the network proxy (createNetworkProxy(…).listenUnix(path)) before planning the command, and pass that path as networkProxy.unixSocket',
      });
    }
    proxySocket = real;
    // Bound onto itself: it exists, so nothing is created on the host.
    plan.binds.push('--ro-bind', real, real);
    plan.env = {
      ...proxyEnvironment({ httpPort: PROXY_BRIDGE_PORT, platform: 'linux' }),
      UX_SANDBOX_NETWORK: 'proxied',
    };
    plan.notes.push(
      `network is proxied: the only way out is the host's proxy (${given}), offered inside on 127.0.0.1:${PROXY_BRIDGE_PORT}; programs that ignore the proxy variables cannot connect, and UDP (DNS included) is refused`,
    );
  }
  const restrictedReads = !layout.readAll && !layout.writableRoots.some((root) => root.root === '/');
  for (const path of restrictedReads ? layout.allowUnixSockets : []) {
    const real = host.fs.realpath(path);
    if (!real || !isSocket(real)) {
      plan.notes.push(
        `allowed unix socket ${path} does not exist: it is not visible inside (reads are restricted)`,
      );
    } else {
      if (real !== proxySocket && !plan.binds.includes(real)) plan.binds.push('--ro-bind', real, real);
      if (real !== path)
        plan.notes.push(
          `allowed unix socket ${path} is reached through a symbolic link: inside, only its real path ${real} exists`,
        );
    }
  }
  if (layout.network === 'proxied' || plan.superviseConnect) {
    plan.shimArgs.push('--seccomp-fd', String(SECCOMP_FD));
    if (proxySocket) plan.shimArgs.push('--bridge', `${PROXY_BRIDGE_PORT}=${proxySocket}`);
    for (const path of layout.allowUnixSockets) plan.shimArgs.push('--allow-unix', path);
    if (plan.superviseConnect && layout.network !== 'restricted') plan.shimArgs.push('--connect-ip');
    plan.shimArgs.push('--');
  }
  if (plan.superviseConnect) {
    plan.notes.push(
      `unix sockets outside the sandbox: only ${layout.allowUnixSockets.join(', ')} (connect() is checked by a supervisor; other paths, relative and abstract addresses get EACCES)`,
    );
  } else if (layout.network === 'enabled') {
    plan.notes.push(
      'unix sockets outside the sandbox are unreachable: socket(AF_UNIX) is refused (socketpair works)',
    );
  }
  if (layout.network !== 'restricted' || plan.superviseConnect) {
    plan.notes.push(
      'descriptors the command inherits or receives over SCM_RIGHTS are not checked, and a datagram socketpair can still send to a named host datagram socket with sendmsg()',
    );
  }
  return plan;
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
