import { posix } from 'node:path';
import { type SandboxPlanRequest, SandboxUnavailableError } from '@ux/protocol/core';
import {
  checkPosixPlanRequest,
  type FsView,
  globToRegExp,
  isUnder,
  PROXY_BRIDGE_PORT,
  protectedEntryFor,
  proxyEnvironment,
  resolveSandboxLayout,
  type SandboxLayout,
} from '@ux/protocol-utils';
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
  /**
   * The compiled seccomp program for this plan (`buildSeccompProgram`): one program for every plan, or
   * the program for each kind of filter (the network mode, and whether connect() is supervised). It
   * travels from the host's memory on the launcher's command line into a sealed memfd (see
   * `launcherArgv`): there is no file a sandboxed command could rewrite.
   */
  seccompProgram: Uint8Array | ((kind: SeccompFilterKind) => Uint8Array);
  /**
   * Whether an existing path is a Unix socket (the proxy's, or one of `allowUnixSockets`). Default:
   * what `fs.kind` calls `other` (sockets, FIFOs, devices).
   */
  isSocket?: (path: string) => boolean;
  /** An empty file with mode 000, bound over deny-read files. */
  deniedFile: string;
  /**
   * `ux-sandbox-exec` (canonical path): on the host the launcher bwrap starts through (`--launch`, see
   * `launcherArgv`), inside the sandbox the program bwrap runs in place of the command: it restores the
   * default signal dispositions the launcher took away from bwrap, then runs the command. Bound
   * read-only at its own path; inside a writable root it is also pinned (host code).
   */
  execShim: string;
  /**
   * ux's own host directories (the per-user runtime roots of every ux process, the quarantine): masked
   * (`--perms 0000 --tmpfs … --remount-ro`) wherever a command could see them, inside a writable root
   * or not, so a command can neither read nor rewrite what any ux process trusts.
   */
  privateDirs?: readonly string[];
  /**
   * The session's private `/tmp` on the host (a directory of the backend's runtime directory), bound at
   * `/tmp` when the layout says `privateTmp`. A plan that needs it and has none is refused.
   */
  privateTmp?: string;
  /**
   * Other host programs ux runs outside the sandbox (`ux-path-guard`, bwrap itself; canonical paths):
   * read-only, with every directory up to the outermost writable root pinned, when a writable root
   * holds them, so no command can replace what the host runs next.
   */
  hostPrograms?: readonly string[];
  fs: FsView;
  homeDir?: string;
  /** The bwrap build knows `--disable-userns` (0.8.0+). */
  disableUserns: boolean;
}

export interface BwrapPlan {
  /** `launcherArgv(…)` followed by bwrap's command line. */
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
  checkPosixPlanRequest(request, 'bwrap plan');

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
  const push = (op: MountOp) => {
    if (!ops.some((other) => other.dest === op.dest && other.args.join('\0') === op.args.join('\0')))
      ops.push(op);
  };
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

  // The session's private /tmp, first: a writable root below /tmp (a workspace in /tmp) is bound on top
  // of it at its own path, and so is an explicit writable root `/tmp`.
  if (layout.privateTmp) {
    if (!host.privateTmp) {
      throw new SandboxUnavailableError({
        backend: 'bwrap',
        reason: 'the policy gives commands a private /tmp, and this host has no directory for it',
        fix: 'plan through createBwrapSandbox(), which makes one per session, or pass BwrapHost.privateTmp',
      });
    }
    ops.push({ dest: '/tmp', args: ['--bind', host.privateTmp, '/tmp'] });
    notes.push(
      `/tmp is private to this session (TMPDIR=/tmp): its commands share it, nothing outside the sandbox reads it, and it is removed when the session ends; on the host it is ${host.privateTmp}. The host's /tmp and $TMPDIR are not reachable (a writable root inside them still is, at its own path)`,
    );
  }

  // The outermost writable root holding a path: every directory up to it is pinned (renaming any of
  // them would move the path, mount points and all, and let a command build it again).
  const ownerOf = (path: string) => writableRoots.find((w) => isUnder(path, w));
  const guard = (target: GuardTarget) => {
    if (!guardTargets.some((t) => t.dir === target.dir && t.name === target.name)) guardTargets.push(target);
  };
  for (const { root, readOnly } of layout.writableRoots) {
    // The one predicate: a writable root inside a name another root protects (a --writable-root of a
    // repository's .git/hooks) is not granted; nothing re-grants a protected name.
    const protectedBy = protectedEntryFor(
      { writableRoots: layout.writableRoots.filter((other) => other.root !== root), hidden: layout.hidden },
      root,
    );
    if (protectedBy) {
      notes.push(`writable root ${root} lies in a protected path (${protectedBy.why}): it stays read-only`);
      continue;
    }
    ops.push({ dest: root, args: ['--bind', root, root] });
    for (const carve of readOnly) {
      // The path as the kernel resolves it, one name at a time: every link on the way that lies in a
      // writable root is kept (a command could otherwise replace it and lead the path elsewhere), and
      // the directories the path goes through are pinned.
      const way = resolveWay(carve.path, host.fs);
      for (const link of way.links) {
        const owner = ownerOf(link.dir);
        if (!owner) continue;
        pin(link.dir, owner);
        const at = posix.join(link.dir, link.name);
        const why = at === carve.path ? carve.why : `the way to ${carve.path}: ${carve.why}`;
        guard({ dir: link.dir, name: link.name, link: link.text, why });
      }
      const end = way.end;
      if (end.kind === 'exists') {
        const owner = ownerOf(end.real);
        if (!owner || end.real === owner) continue;
        pin(posix.dirname(end.real), owner);
        // (A path through a link and the path it leads to are both carve-outs: bound once.)
        push({ dest: end.real, args: ['--ro-bind', end.real, end.real] });
        if (carve.kind === 'symlink')
          notes.push(
            `${carve.path} is a symbolic link: it is kept (whatever a command puts in its place is taken away and the link made again), and what it points to (${end.real}) is read-only`,
          );
      } else if (end.kind === 'missing') {
        // Missing: nothing is bound (that would leave a file on the host); the host watches for it,
        // following the directories on the way as they appear (a chain: `.config/git` in a home with
        // no `.config`), and takes away the last name only. Outside every writable root (a linked
        // worktree's repository, say) it cannot be created.
        const owner = ownerOf(end.anchor);
        if (!owner) continue;
        const name = end.rest.join('/');
        // A work tree's `.git`: a directory there (git init, git clone) is checked after the command.
        guard({
          dir: end.anchor,
          name,
          why: carve.why,
          ...(end.rest.at(-1) === '.git' ? { repository: true } : {}),
        });
        pin(end.anchor, owner);
      } else if (carve.kind === 'symlink') {
        notes.push(`${carve.path} is a symbolic link that ux could not follow (${end.reason})`);
      }
    }
  }

  // Programs the host runs outside the sandbox (the launcher, the guard, bwrap): inside a writable root
  // they are read-only and every directory up to the OUTERMOST root holding them is pinned, or a command
  // could rename a parent away and put its own program where the host looks for the next launch.
  const programs = [...new Set([host.execShim, ...(host.hostPrograms ?? [])])];
  for (const program of programs) {
    const outermost = writableRoots.find((w) => w !== program && isUnder(program, w));
    if (!outermost || host.fs.kind(program) !== 'file') continue;
    pin(posix.dirname(program), outermost);
    push({ dest: program, args: ['--ro-bind', program, program] });
  }

  // What the launch itself reads inside (the request's hostPaths; ux-sandbox-exec; the zsh fork's execve
  // wrapper, without which the patched zsh refuses to run anything): read-only at their canonical paths,
  // ordered with the masks by depth, so a private /tmp or a hidden directory above one does not hide it
  // while a hidden directory below it stays hidden.
  const wrapper = request.env.EXEC_WRAPPER;
  // The shim is bound whatever the view of the file system says: without it nothing runs.
  const hostPaths: string[] = [host.execShim];
  for (const path of [...(wrapper?.startsWith('/') ? [wrapper] : []), ...(request.hostPaths ?? [])]) {
    const real = path.startsWith('/') ? host.fs.realpath(path) : undefined;
    const kind = real === undefined ? undefined : host.fs.kind(real);
    if (real === undefined || (kind !== 'file' && kind !== 'dir')) {
      if (path !== wrapper)
        notes.push(`host path ${path} does not exist or is not absolute: it is not bound`);
      continue;
    }
    if (!hostPaths.includes(real)) hostPaths.push(real);
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
  // Mask a directory traversable (0111, not listable) when something below it must stay reachable.
  // The proxy's socket and allowed unix sockets: bound at their real paths like host paths (a mask
  // above one is made traversable, and its mount point is made before the mask is remounted read-only).
  const socketBinds: string[] = [];
  for (let i = 0; i < network.binds.length; i += 3) socketBinds.push(network.binds[i + 1]!);
  const reachable = [...writableRoots, ...layout.readableRoots, ...hostPaths, ...socketBinds];
  const traversable = (path: string) => reachable.some((other) => other !== path && isUnder(other, path));
  const maskedDirs: string[] = [];
  for (const path of [...new Set(denied)]) {
    const kind = host.fs.kind(path);
    const insideWritable = writableRoots.some((w) => isUnder(path, w));
    if (kind === 'dir') {
      maskedDirs.push(path);
      ops.push({
        dest: path,
        args: ['--perms', traversable(path) ? '0111' : '0000', '--tmpfs', path],
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

  // ux's own directories (every runtime root, the quarantine, the layout's hidden list): masked wherever
  // the command could otherwise see them. One that nothing shows (restricted reads, under the private
  // /tmp, under another mask) is left alone: masking it would only make directories inside the sandbox.
  const shown = [...(fullWrite || layout.readAll ? ['/'] : layout.readableRoots), ...writableRoots];
  const deepest = (candidates: readonly string[], path: string) =>
    Math.max(-1, ...candidates.filter((candidate) => isUnder(path, candidate)).map(depth));
  const exposed = (path: string) => {
    const shownAt = deepest(shown, path);
    if (shownAt < 0) return false;
    if (layout.privateTmp && isUnder(path, '/tmp') && shownAt < 1) return false;
    return deepest(maskedDirs, path) < shownAt;
  };
  // Canonical (a quarantine below a linked UX_HOME), existing directories; `/` itself is never one.
  const hidden = [
    ...new Set(
      [...layout.hidden, ...(host.privateDirs ?? [])]
        .filter((dir) => dir.startsWith('/'))
        .map((dir) => host.fs.realpath(dir) ?? dir),
    ),
  ]
    .filter((dir) => dir !== '/' && host.fs.kind(dir) === 'dir')
    .sort((a, b) => depth(a) - depth(b));
  for (const dir of hidden) {
    if (!exposed(dir)) continue;
    maskedDirs.push(dir);
    ops.push({
      dest: dir,
      args: ['--perms', traversable(dir) ? '0111' : '0000', '--tmpfs', dir],
      remountReadOnly: true,
    });
  }
  // Nothing else is mounted inside a hidden directory: a pin (`--bind` onto itself) or a carve-out of a
  // repository found in the quarantine would show, even make writable, what the mask hides. Only what
  // a writable root inside it brings (an explicit grant) stays.
  const hiddenMasks = maskedDirs.filter((dir) => hidden.includes(dir));
  const mounted = ops.filter(
    (op) =>
      !hiddenMasks.some(
        (mask) =>
          op.dest !== mask &&
          isUnder(op.dest, mask) &&
          !writableRoots.some((w) => isUnder(w, mask) && isUnder(op.dest, w)),
      ),
  );
  // After every mask of the same depth, so a hidden directory above them does not hide them.
  for (const path of [...hostPaths, ...socketBinds])
    if (!mounted.some((op) => op.dest === path && op.args[0] === '--ro-bind'))
      mounted.push({ dest: path, args: ['--ro-bind', path, path] });

  // Parents before children: a mask or bind over a directory must not hide mounts made inside it.
  const ordered = mounted
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
  // Remounted read-only last: bwrap makes the mount points of what lies below a mask inside it first.
  for (const op of ordered) if (op.remountReadOnly) bwrap.push('--remount-ro', op.dest);
  // The sandbox's root is uid 0 when ux runs as root: files of /proc that only check ownership (kernel
  // tunables, the sysrq trigger) must be read-only, or a command could change the host's kernel.
  bwrap.push('--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  if (host.fs.kind('/proc/sysrq-trigger') !== undefined)
    bwrap.push('--ro-bind', '/dev/null', '/proc/sysrq-trigger');
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
  if (layout.privateTmp) env.TMPDIR = '/tmp';
  if (layout.missingWritableRoots.length > 0) {
    notes.push(`writable roots that do not exist were skipped: ${layout.missingWritableRoots.join(', ')}`);
  }
  const keepFds = [...new Set(request.keepFds ?? [])].sort((a, b) => a - b);
  const program =
    host.seccompProgram instanceof Uint8Array
      ? host.seccompProgram
      : host.seccompProgram({ network: layout.network, superviseConnect: network.superviseConnect });
  const argv = [...launcherArgv(host.execShim, program, keepFds), ...bwrap];
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
  // Each allowed socket is bound at its real path whatever else the view hides (restricted reads, a
  // private /tmp, ux's masks): connect() to it is what the policy allows.
  const restrictedReads = !layout.readAll && !layout.writableRoots.some((root) => root.root === '/');
  for (const path of layout.allowUnixSockets) {
    const real = host.fs.realpath(path);
    if (!real || !isSocket(real)) {
      if (restrictedReads || layout.privateTmp)
        plan.notes.push(
          `allowed unix socket ${path} does not exist: it is not visible inside (reads are restricted, or /tmp is private)`,
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
 * The launcher bwrap starts through: `ux-sandbox-exec --launch` (native/ux-sandbox-exec.c), on the host.
 * It makes bwrap ignore SIGHUP, SIGINT, SIGQUIT and SIGTERM: they are sent to the whole process group
 * (or the terminal's foreground group), and bwrap, which would die of them and take the sandbox with
 * it, must stay until the command has handled them and exited (`ux-sandbox-exec` inside gives the
 * command its default dispositions back). It closes every inherited descriptor above stderr (bwrap
 * passes them all into the sandbox, and an open descriptor to a file outside is a way out no mount can
 * stop) except `keepFds` (the request's, checked by `planBwrap`: whole numbers from 10 to 1023). It
 * writes `program` (here, in hex, from the host's memory) into a memfd, seals it (no shrink, grow,
 * write or further seal) and puts it on descriptor 3 for bwrap's `--seccomp 3` or `ux-sandbox-exec
 * --seccomp-fd 3` inside. No seccomp program is ever a file, so none can be rewritten between launches.
 * A kernel that cannot seal a memfd fails the launch (exit 125, `ux: sandbox setup failed: …`).
 * bwrap's own command line follows.
 */
export function launcherArgv(
  execShim: string,
  program: Uint8Array,
  keepFds: readonly number[] = [],
): string[] {
  const kept = [...new Set(keepFds)].sort((a, b) => a - b).flatMap((fd) => ['--keep-fd', String(fd)]);
  return [
    execShim,
    '--launch',
    ...kept,
    '--seccomp-program',
    Buffer.from(program.buffer, program.byteOffset, program.byteLength).toString('hex'),
    '--',
  ];
}

/** Where a path leads, name by name, as the kernel would resolve it (`resolveWay`). */
export interface ResolvedWay {
  /** The symbolic links met on the way (the path's own last name included), in order. */
  links: { dir: string; name: string; text: string }[];
  end:
    | { kind: 'exists'; real: string }
    /** `anchor`: the deepest existing directory; `rest`: the names below it (the first is missing, or a file). */
    | { kind: 'missing'; anchor: string; rest: string[] }
    | { kind: 'unresolved'; reason: string };
}

/** How many links a path may go through (the kernel's own limit). */
const MAX_LINKS = 40;

/**
 * Resolves an absolute path one name at a time without trusting any link: each symbolic link met is
 * recorded with its directory (canonical) and text, then followed. Ends at the real entry, or at the
 * deepest existing directory and the names below it when something on the way is missing or is a file.
 */
export function resolveWay(path: string, fs: FsView): ResolvedWay {
  const links: ResolvedWay['links'] = [];
  let parts = path.split('/').filter((part) => part !== '' && part !== '.');
  let current = '/';
  let hops = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === '..') {
      current = posix.dirname(current);
      continue;
    }
    const next = posix.join(current, part);
    const kind = fs.kind(next);
    if (kind === 'dir') {
      current = next;
      continue;
    }
    if (kind === 'symlink') {
      if (++hops > MAX_LINKS) return { links, end: { kind: 'unresolved', reason: 'too many links' } };
      let text = fs.readlink?.(next);
      if (text === undefined) {
        // No readlink: the link's resolved target, when it exists, stands for its text.
        text = fs.realpath(next);
        if (text === undefined) return { links, end: { kind: 'unresolved', reason: 'a dangling link' } };
      }
      if (!links.some((link) => link.dir === current && link.name === part))
        links.push({ dir: current, name: part, text });
      if (text.startsWith('/')) current = '/';
      parts = [...text.split('/').filter((p) => p !== '' && p !== '.'), ...parts.slice(i + 1)];
      i = -1;
      continue;
    }
    if (kind !== undefined && i === parts.length - 1) return { links, end: { kind: 'exists', real: next } };
    // Missing, or a file where a directory is needed: nothing below it exists. The names from here
    // on are what a command would create; one after a `..` is cut there (the name before it is then
    // the last: taking it away is the safe side).
    const rest = parts.slice(i);
    const up = rest.indexOf('..');
    return { links, end: { kind: 'missing', anchor: current, rest: up === -1 ? rest : rest.slice(0, up) } };
  }
  return { links, end: { kind: 'exists', real: current } };
}

/**
 * The directory each glob's literal part names (`/home/u/.ssh` for `/home/u/.ssh/*.pem`): its matches
 * may lie outside the cwd and writable roots. `/` itself is left out, too wide to scan.
 */
export function globBases(patterns: readonly string[]): string[] {
  return patterns.flatMap((pattern) => {
    const parts = pattern.split('/');
    const literal = parts.findIndex((part) => /[*?[\\]/.test(part));
    const base = parts.slice(0, literal === -1 ? parts.length - 1 : literal).join('/');
    return base === '' ? [] : [base];
  });
}

/** Existing matches of deny-read globs under the given roots, breadth-first, bounded. */
export function expandGlobs(
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
