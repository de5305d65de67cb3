import { posix } from 'node:path';
import { type SandboxCapability, type SandboxPlanRequest, SandboxUnavailableError } from '@ux/protocol/core';
import {
  checkPosixPlanRequest,
  type FsView,
  isUnder,
  protectedEntryFor,
  resolveSandboxLayout,
  type SandboxLayout,
} from '@ux/protocol-utils';
import {
  expandGlobs,
  type GuardTarget,
  globBases,
  LINUX_MINIMAL_READ_ROOTS,
  resolveWay,
  type SeccompNetwork,
} from '@ux/sandbox-bwrap/linux';

/** At most this many bytes of path rules on one command line (Linux allows 2 MiB for all of argv and env). */
export const MAX_RULE_BYTES = 1024 * 1024;

/** The backend id, in plans, errors and `[sandbox.landlock]`. */
export const LANDLOCK_BACKEND_ID = 'landlock';

/**
 * Device files every command gets read, write and (ABI 5+) device ioctls on; nothing else of /dev.
 * Not `/dev/pts` nor `/dev/ptmx`: the host's devpts is shared (no private /dev as under bwrap), and its
 * entries are this user's other terminals, whose input a command could read and whose screen it could
 * write. The command's own terminal arrives open on its standard descriptors, and `/dev/tty` names it.
 */
export const LANDLOCK_DEVICES = [
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/tty',
];

/** The lowest Landlock ABI this backend runs on at all, and the one its write limits need (TRUNCATE). */
export const LANDLOCK_MIN_ABI = 1;
export const LANDLOCK_WRITE_ABI = 3;
/** From this ABI, abstract unix sockets and signals are scoped to the sandbox. */
export const LANDLOCK_SCOPE_ABI = 6;
/** From this ABI, TCP bind and connect are refused by Landlock too (besides the seccomp filter). */
export const LANDLOCK_NET_ABI = 4;

/**
 * What this backend enforces on a kernel with Landlock ABI `abi` (0: none). Honest by construction:
 * before ABI 3 `truncate()` of a file outside the writable roots is not a Landlock right, so neither
 * the write limits nor what builds on them (protected names, a private /tmp) hold. Network off holds
 * through ux's seccomp filter at any ABI (no socket but AF_UNIX, no connect), and through Landlock's
 * TCP rules too from ABI 4. Never: `network_by_domain` (no network namespace to hold the proxy's
 * bridge), `unix_socket_control` (no supervisor), `process_isolation` (host processes are visible in
 * /proc), `resource_limits`.
 */
export function landlockEnforces(abi: number): SandboxCapability[] {
  if (abi < LANDLOCK_MIN_ABI) return [];
  const enforces: SandboxCapability[] = [];
  if (abi >= LANDLOCK_WRITE_ABI) enforces.push('write_limits', 'protected_names');
  enforces.push('read_deny', 'network_off');
  if (abi >= LANDLOCK_WRITE_ABI) enforces.push('private_tmp');
  return enforces;
}

/** What the planner needs to know about the host; all of it injected, so plans are deterministic. */
export interface LandlockHost {
  /** `ux-landlock-exec` (canonical path). */
  launcher: string;
  /** The kernel's Landlock ABI (the probe's). The launcher refuses to run on a lower one. */
  abi: number;
  /**
   * Tests: the launcher uses no right newer than this ABI (`--max-abi`), as on an older kernel. `abi`
   * must not exceed it.
   */
  maxAbi?: number;
  /** The seccomp program for the network mode (`buildSeccompProgram(arch, network)`). */
  seccompProgram: (network: SeccompNetwork) => Uint8Array;
  fs: FsView;
  homeDir?: string;
  /**
   * ux's own host directories (every per-user runtime root, the quarantine): never readable, never
   * writable. A plan that would have to grant one (it lies inside a writable root) is refused.
   */
  privateDirs?: readonly string[];
  /** The session's private temporary directory (writable; `TMPDIR` points at it), for `privateTmp`. */
  privateTmp?: string | (() => string);
  /**
   * Programs the host runs outside the sandbox (the launcher, the path guard, the remover; canonical):
   * a plan whose writable roots hold one is refused (Landlock cannot keep it read-only there).
   */
  hostPrograms?: readonly string[];
}

export interface LandlockPlan {
  argv: string[];
  env: Record<string, string>;
  /** Missing protected names inside writable roots, for the path guard to take away when created. */
  guardTargets: GuardTarget[];
  notes: string[];
  layout: SandboxLayout;
  /** The Landlock rules, in the launcher's terms (for tests and `ux doctor`). */
  rules: { ro: string[]; rw: string[]; dev: string[] };
}

const FIX_USE_BWRAP =
  'use the bwrap backend, which can keep it read-only (install bubblewrap: apt-get install bubblewrap, and put "bwrap" first in sandbox_backends), or run the command in read-only mode (sandbox_mode = "read-only")';

function refuse(reason: string, fix: string = FIX_USE_BWRAP): never {
  throw new SandboxUnavailableError({ backend: LANDLOCK_BACKEND_ID, reason, fix });
}

/**
 * The launch for one request: `ux-landlock-exec` with one Landlock rule per path, then the command.
 * Landlock can only grant; whatever must stay unreadable or read-only is left out of the grants, and
 * where that is impossible (inside a writable root, where every right is granted beneath the root) the
 * plan refuses with a `SandboxUnavailableError` naming the path and the fix, never a weaker launch.
 * Pure: it only reads through `host.fs`.
 */
export function planLandlock(request: SandboxPlanRequest, host: LandlockHost): LandlockPlan {
  checkPosixPlanRequest(request, 'landlock plan');
  if (host.abi < LANDLOCK_MIN_ABI)
    refuse(
      'the kernel has no Landlock',
      'boot a kernel with Landlock enabled (CONFIG_SECURITY_LANDLOCK, lsm=…,landlock)',
    );

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
  const fullAccess = request.policy.fileSystem.kind !== 'restricted';

  // Network: what the seccomp filter (and Landlock's TCP rules) can hold without a namespace.
  if (layout.network === 'proxied')
    refuse(
      'the policy allows the network by domain (through the proxy), and Landlock has no network namespace to hold the bridge to it: a command could connect anywhere',
      'use the bwrap backend (install bubblewrap), or turn the network off (network_access = false) or on',
    );
  if (layout.allowUnixSockets.length > 0)
    refuse(
      `the policy allows some unix sockets (${layout.allowUnixSockets.join(', ')}) and no others, and this backend has no connect() supervisor to tell them apart`,
      'use the bwrap backend (install bubblewrap), or drop allow_unix_sockets',
    );
  if (!fullAccess && host.abi < LANDLOCK_WRITE_ABI)
    refuse(
      `the kernel offers Landlock ABI ${host.abi}; before ABI 3 truncate() is not restricted, so writes cannot be limited`,
      'use the bwrap backend (install bubblewrap), or a kernel of 6.2 or later',
    );

  const writableRoots: string[] = [];
  const guardTargets: GuardTarget[] = [];
  const guard = (target: GuardTarget) => {
    if (!guardTargets.some((t) => t.dir === target.dir && t.name === target.name)) guardTargets.push(target);
  };
  const fullWrite = layout.writableRoots.some((root) => root.root === '/');
  if (fullWrite)
    refuse(
      "the policy makes / writable, and Landlock cannot keep ux's own directories out of a writable /",
      'use the bwrap backend (install bubblewrap), or name narrower writable roots',
    );
  // The roots granted, outermost first: a writable root inside a name another root protects is not.
  const granted = layout.writableRoots.filter(({ root }) => {
    const protectedBy = protectedEntryFor(
      { writableRoots: layout.writableRoots.filter((other) => other.root !== root), hidden: layout.hidden },
      root,
    );
    if (protectedBy)
      notes.push(`writable root ${root} lies in a protected path (${protectedBy.why}): it stays read-only`);
    return !protectedBy;
  });
  for (const { root, readOnly } of granted) {
    // A missing name is watched from the OUTERMOST granted root holding it: an inner root can be
    // renamed away through the outer one's rights, the outermost cannot.
    const outermost = (path: string) => granted.find((other) => isUnder(path, other.root))?.root ?? root;
    for (const carve of readOnly) {
      const way = resolveWay(carve.path, host.fs);
      const linkInRoot = way.links.find((link) => isUnder(link.dir, root));
      if (linkInRoot)
        refuse(
          `${carve.path} must stay read-only (${carve.why}), and the way to it goes through the symbolic link ${posix.join(linkInRoot.dir, linkInRoot.name)} inside the writable root ${root}, which Landlock cannot keep`,
        );
      const end = way.end;
      if (end.kind === 'exists') {
        if (!isUnder(end.real, root) || end.real === root) continue;
        refuse(
          `${end.real} exists inside the writable root ${root} and must stay read-only (${carve.why}); Landlock can only grant access beneath a directory, never take part of it back`,
        );
      } else if (end.kind === 'missing') {
        if (!isUnder(end.anchor, root)) continue;
        // Watched from the writable root itself, the one directory on the way that a command cannot
        // rename (nothing pins the others as bwrap's mount points do): the guard follows the names
        // below it as a chain, so `mv .local away && mkdir -p .local/bin` is caught as well.
        const from = outermost(end.anchor);
        guard({
          dir: from,
          name: posix.relative(from, posix.join(end.anchor, ...end.rest)),
          why: carve.why,
          ...(end.rest.at(-1) === '.git' ? { repository: true } : {}),
        });
      } else {
        refuse(`${carve.path} must stay read-only (${carve.why}), and ux cannot follow it (${end.reason})`);
      }
    }
    writableRoots.push(root);
  }
  for (const program of host.hostPrograms ?? []) {
    const owner = writableRoots.find((w) => isUnder(program, w));
    if (owner)
      refuse(
        `the host program ${program} lies inside the writable root ${owner}: a command could replace what ux runs next outside the sandbox`,
        'install ux outside the workspace, or use the bwrap backend',
      );
  }

  // Private /tmp: a directory of the session's own, granted writable; TMPDIR points at it. The host's
  // /tmp (and $TMPDIR) are left out of every read grant.
  let privateTmp: string | undefined;
  const cuts: string[] = [];
  if (layout.privateTmp) {
    privateTmp = typeof host.privateTmp === 'function' ? host.privateTmp() : host.privateTmp;
    if (!privateTmp)
      refuse(
        'the policy gives commands a private /tmp, and this host has no directory for it',
        'plan through createLandlockSandbox(), which makes one per session, or pass LandlockHost.privateTmp',
      );
    for (const tmp of ['/tmp', request.env.TMPDIR]) {
      const real = tmp?.startsWith('/') ? host.fs.realpath(tmp) : undefined;
      if (!real || real === '/' || host.fs.kind(real) !== 'dir') continue;
      // (A writable root inside it stays reachable: it is granted by its own path.)
      if (writableRoots.some((w) => isUnder(real, w))) continue;
      cuts.push(real);
    }
    notes.push(
      `/tmp is private to this session: TMPDIR=${privateTmp}, writable; the host's /tmp cannot be read or written. Unlike bwrap it is not mounted at /tmp: a program that writes to /tmp by name instead of $TMPDIR fails with EACCES`,
    );
  }

  // Unreadable: deny-read entries and their glob matches, ux's own directories, the host's /tmp under
  // a private one, and /dev (only the devices of LANDLOCK_DEVICES are granted).
  const denied = [
    ...layout.unreadable,
    ...expandGlobs(
      layout.unreadableGlobs,
      [request.cwd, ...writableRoots, ...globBases(layout.unreadableGlobs)],
      host.fs,
      notes,
    ),
  ];
  const hidden = [...layout.hidden, ...(host.privateDirs ?? [])]
    .filter((dir) => dir.startsWith('/'))
    .map((dir) => host.fs.realpath(dir) ?? dir)
    .filter((dir) => dir !== '/' && host.fs.kind(dir) !== undefined);
  for (const path of [...new Set([...denied, ...hidden])]) {
    const owner = writableRoots.find((w) => isUnder(path, w));
    if (owner) {
      if (host.fs.kind(path) === undefined) {
        notes.push(
          `deny-read path ${path} does not exist: it is not hidden if it is created while the command runs`,
        );
        continue;
      }
      refuse(
        `${path} must stay unreadable, and it lies inside the writable root ${owner}; Landlock can only grant access beneath a directory, never take part of it back`,
        'use the bwrap backend (install bubblewrap), or move it out of the writable root',
      );
    }
    if (host.fs.kind(path) !== undefined) cuts.push(path);
  }
  cuts.push('/dev');

  // Read grants: each readable root, or, when something to hide lies below it, every entry along the
  // way to it but the hidden ones (the directories on the way are then not listable themselves).
  const readable = layout.readAll ? ['/'] : [...layout.readableRoots];
  const ro: string[] = [];
  const shadowed: string[] = [];
  const grant = (path: string) => {
    if (cuts.some((cut) => isUnder(path, cut))) return;
    if (!cuts.some((cut) => cut !== path && isUnder(cut, path))) {
      ro.push(path);
      return;
    }
    // A directory with something to hide below: its own entries one by one (links are not followed:
    // their targets are granted by their own paths), never the directory itself.
    shadowed.push(path);
    for (const name of host.fs.readdir(path).sort()) {
      const child = path === '/' ? `/${name}` : `${path}/${name}`;
      const kind = host.fs.kind(child);
      if (kind === undefined || kind === 'symlink') continue;
      grant(child);
    }
  };
  for (const root of readable) grant(root);
  // /proc: the command's own processes need it; bwrap mounts a private one, here it is the host's.
  if (!ro.some((path) => isUnder('/proc', path))) ro.push('/proc');
  const shadowedListed = shadowed.filter((dir) => dir !== '/dev');
  if (shadowedListed.length > 0)
    notes.push(
      `directories on the way to hidden paths cannot be listed (their entries stay readable by name): ${shadowedListed.join(', ')}; files created in them while the command runs cannot be read`,
    );

  // What the launch itself reads (the request's hostPaths, the zsh fork's execve wrapper): read-only at
  // its canonical path, hidden directory or not. Never writable: inside a writable root it is refused.
  const wrapper = request.env.EXEC_WRAPPER;
  for (const path of [...(wrapper?.startsWith('/') ? [wrapper] : []), ...(request.hostPaths ?? [])]) {
    const real = path.startsWith('/') ? host.fs.realpath(path) : undefined;
    const kind = real === undefined ? undefined : host.fs.kind(real);
    if (real === undefined || (kind !== 'file' && kind !== 'dir')) {
      if (path !== wrapper)
        notes.push(`host path ${path} does not exist or is not absolute: it is not granted`);
      continue;
    }
    const owner = writableRoots.find((w) => isUnder(real, w));
    if (owner)
      refuse(
        `ux's own file ${real} (read by the launch) lies inside the writable root ${owner}, where a command could rewrite it`,
        "keep ux's files outside the workspace, or use the bwrap backend",
      );
    if (!ro.includes(real)) ro.push(real);
  }

  const rw = [...writableRoots, ...(privateTmp ? [privateTmp] : [])];
  const dev = LANDLOCK_DEVICES.filter((path) => host.fs.kind(path) !== undefined);
  const network: SeccompNetwork = layout.network === 'restricted' ? 'restricted' : 'enabled';
  const program = host.seccompProgram(network);
  const keepFds = [...new Set(request.keepFds ?? [])].sort((a, b) => a - b);
  const argv = [host.launcher, '--min-abi', String(host.abi)];
  if (host.maxAbi !== undefined) argv.push('--max-abi', String(host.maxAbi));
  for (const path of ro) argv.push('--ro', path);
  for (const path of rw) argv.push('--rw', path);
  for (const path of dev) argv.push('--dev', path);
  for (const fd of keepFds) argv.push('--keep-fd', String(fd));
  if (network === 'restricted' && host.abi >= LANDLOCK_NET_ABI) argv.push('--net-off');
  if (host.abi >= LANDLOCK_SCOPE_ABI) argv.push('--scope');
  argv.push(
    '--seccomp-program',
    Buffer.from(program.buffer, program.byteOffset, program.byteLength).toString('hex'),
    '--',
    ...request.argv,
  );

  // One rule per entry next to a hidden path: a directory with very many entries (a crowded /tmp)
  // would make a command line the kernel refuses (E2BIG); refuse it here, with the reason.
  const ruleBytes = [...ro, ...rw].reduce((sum, path) => sum + path.length + 6, 0);
  if (ruleBytes > MAX_RULE_BYTES) {
    const crowded = shadowed
      .map((dir) => ({ dir, entries: ro.filter((path) => posix.dirname(path) === dir).length }))
      .sort((a, b) => b.entries - a.entries)[0];
    refuse(
      `the Landlock rules would not fit a command line (${ruleBytes} bytes): ${crowded?.dir ?? 'a directory'} holds ${crowded?.entries ?? 'too many'} entries beside a hidden path, each granted on its own`,
      "give the policy a private /tmp (the host's /tmp is then not granted at all), clean up that directory, or use the bwrap backend",
    );
  }

  const env: Record<string, string> = { ...request.env, UX_SANDBOX: LANDLOCK_BACKEND_ID };
  if (layout.network === 'restricted') env.UX_SANDBOX_NETWORK_DISABLED = '1';
  if (privateTmp) env.TMPDIR = privateTmp;
  if (layout.missingWritableRoots.length > 0)
    notes.push(`writable roots that do not exist were skipped: ${layout.missingWritableRoots.join(', ')}`);
  if (layout.network === 'enabled')
    notes.push(
      'unix sockets outside the sandbox are unreachable: socket(AF_UNIX) is refused (socketpair works)',
    );
  notes.push(...limitNotes(host.abi));
  return { argv, env, guardTargets, notes, layout, rules: { ro, rw, dev } };
}

/** What a Landlock sandbox leaves open on this ABI, for every plan's `enforcement.notes`. */
export function limitNotes(abi: number): string[] {
  const notes = [
    'Landlock: no namespaces. Host processes are visible in /proc (command lines included); ptrace and /proc/<pid>/mem, environ and fd of processes outside the sandbox are refused',
    'Landlock: no resource limits, and the network cannot be allowed by domain',
    'missing protected names are taken away by the path guard just after they appear (a window of microseconds); an existing protected path inside a writable root makes the plan refuse',
    'Landlock does not cover metadata: the permission bits, times and user extended attributes of files outside the writable roots that this user owns can be changed (set-user-id bits, ownership and security attributes cannot: the seccomp filter and the dropped capabilities refuse them)',
    'hidden paths can still be looked up with stat() (existence, size, times) and watched with inotify; their contents cannot be read and their directories cannot be listed',
    "no pid namespace: a background process that leaves the command's process group (setsid, a daemon) outlives the command, sandboxed still",
    'no private /dev: other terminals (/dev/pts) cannot be opened, so programs that make their own terminal (script, tmux) fail; /dev/shm is not writable',
  ];
  if (abi < LANDLOCK_SCOPE_ABI)
    notes.push(
      `Landlock ABI ${abi}: signals to processes outside the sandbox are not scoped (ABI 6): a command can signal this user's other processes`,
    );
  return notes;
}
