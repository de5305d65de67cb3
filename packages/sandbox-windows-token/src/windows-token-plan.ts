import { win32 } from 'node:path';
import {
  InvalidArgumentsError,
  isAbsolutePath,
  type LaunchPlan,
  MissingCommandLineError,
  type SandboxEnforcement,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import {
  canonicalize,
  type FsView,
  isUnder,
  type PolicyContext,
  protectedEntryFor,
  resolveSandboxLayout,
  type SandboxLayout,
  windowsCommandLine,
} from '@ux/protocol-utils';
import { capabilitySidFor } from './capability-sid.js';
import { encodeLaunchSpec, type WindowsTokenLaunchSpec } from './launch-spec.js';
import {
  CONTAINER_INHERIT_ACE,
  DISABLE_MAX_PRIVILEGE,
  EVERYONE_SID,
  LUA_TOKEN,
  OBJECT_INHERIT_ACE,
  SANDBOX_ALLOW_MASK,
  SANDBOX_DENY_MOVE_MASK,
  SANDBOX_DENY_WRITE_MASK,
  WRITE_RESTRICTED,
} from './win32-access.js';
import { normalizeWin32Path, win32ApiPath } from './win32-path.js';
import { windowsSandboxEnv } from './windows-sandbox-env.js';

/**
 * Who an ACE is for. `capability`: the SID derived from the sandbox id and its writable roots, kept on
 * disk between runs. `run`: a SID the launcher makes fresh for each run and removes after it, so two runs
 * never share (or undo) each other's entries.
 */
export type AceTrustee = 'capability' | 'run';

/** One access-control entry the launcher adds before the command starts. */
export interface WindowsAce {
  /** The path as Win32 file functions take it (`\\?\` form when long). */
  path: string;
  trustee: AceTrustee;
  type: 'allow' | 'deny';
  mask: number;
  /** ACE flags: `CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE` for a directory tree, 0 for this object only. */
  flags: number;
  /** `after-run`: removed when the command has exited; `never`: a grant kept so the next run is fast. */
  undo: 'after-run' | 'never';
  why: string;
}

/** The restricted token the command runs with. */
export interface WindowsTokenSpec {
  /** CreateRestrictedToken flags: DISABLE_MAX_PRIVILEGE | LUA_TOKEN | WRITE_RESTRICTED. */
  flags: number;
  /**
   * Restricting SIDs. A write must be granted to one of them as well as to the user; reads follow the
   * normal ACLs. `<run>` and `<logon>` are filled in by the launcher (a fresh SID; the session's logon SID).
   */
  restrictingSids: string[];
}

/** Everything the Windows sandbox does for one command, as data. */
export interface WindowsTokenPlan extends Omit<LaunchPlan, 'cleanup'> {
  sandboxId: string;
  capabilitySid: string;
  /** Null when the command runs unrestricted (unrestricted or external-sandbox policy). */
  token: WindowsTokenSpec | null;
  aces: WindowsAce[];
  /** The command line the launcher passes to CreateProcessAsUserW. */
  commandLine: string;
  /**
   * Environment variables the plan added to the request's; with a private temporary directory also
   * TEMP and TMP (and TMPDIR when set), whose values it replaces.
   */
  envAdded: Record<string, string>;
  /** What the launcher reads (also encoded in `argv`); null without a launcher. */
  launch: WindowsTokenLaunchSpec | null;
}

/** Host facts the planner needs, injected so plans are deterministic and testable on any OS. */
export interface WindowsTokenHostFacts {
  /** Answers for Windows paths. */
  fs: FsView;
  /** The node.exe that runs the launcher. */
  nodePath: string;
  /** The launcher script (`dist/windows-token-launcher.js`). */
  launcherPath: string;
  /** Names the sandbox; with the writable roots it determines the capability SID. Default `default`. */
  sandboxId?: string;
  /** Keep grants on writable roots between runs (default true), or remove them after each run. */
  persistGrants?: boolean;
  /**
   * The private temporary directory for a policy with `privateTmp` (absolute), or a function that
   * makes it, called only when the policy has one. Without it such a policy is refused.
   * `createWindowsTokenSandbox` passes the backend's own directory.
   */
  privateTmpDir?: string | (() => string);
}

/** CreateProcess limits a command line to 32,767 characters, the launcher's own included. */
const MAX_COMMAND_LINE = 32_767;

/**
 * Plans one command under a write-restricted token: the token, the ACEs that grant the writable roots
 * and protect what must stay read-only inside them, the environment, and what is advisory. Pure.
 */
export function planWindowsToken(
  request: SandboxPlanRequest,
  facts: WindowsTokenHostFacts,
): WindowsTokenPlan {
  if (request.argv.length === 0) throw new MissingCommandLineError();
  if (!isAbsolutePath(request.cwd)) {
    throw invalid('cwd', `must be an absolute path, got ${JSON.stringify(request.cwd)}`);
  }
  const commandLine = windowsCommandLine(request.argv, { tool: 'sandbox plan' });
  const sandboxId = facts.sandboxId ?? 'default';
  // An outer sandbox decides the network of an external-sandbox command; otherwise fail closed on what
  // this backend cannot hold a command to.
  if (request.policy.fileSystem.kind !== 'external-sandbox') refuseUnenforceableNetwork(request);
  const network = request.policy.network;
  const { env, added, kept } = windowsSandboxEnv(request.env, network);
  const notes: string[] = [];
  if (network === 'restricted') {
    notes.push(
      'network blocking is advisory: proxies point at a closed port and package managers are told to stay offline, but a program that ignores them can still connect; blocking needs an elevated set-up (a sandbox user and a firewall rule) that this backend does not make',
    );
    if (kept.length > 0) notes.push(`already set and kept as given: ${kept.join(', ')}`);
  } else if (network === 'enabled' && request.policy.fileSystem.kind !== 'external-sandbox') {
    notes.push(
      'unix sockets (AF_UNIX) and named pipes are not limited by this backend beyond their own ACLs: with the network on, the command may connect to any the user can',
    );
  }

  if (request.policy.fileSystem.kind !== 'restricted') {
    notes.unshift(
      request.policy.fileSystem.kind === 'external-sandbox'
        ? 'external-sandbox policy: an outer sandbox enforces the file system; the command runs with the normal token'
        : 'the file system is not restricted (unrestricted policy); the command runs with the normal token',
    );
    return {
      argv: [...request.argv],
      cwd: request.cwd,
      env,
      sandboxType: 'windows-token',
      enforcement: {
        fileSystem: 'none',
        network:
          request.policy.fileSystem.kind === 'external-sandbox'
            ? 'none'
            : network === 'restricted'
              ? 'advisory'
              : 'enforced',
        notes,
      },
      sandboxId,
      capabilitySid: '',
      token: null,
      aces: [],
      commandLine,
      envAdded: added,
      launch: null,
    };
  }

  const context: PolicyContext = {
    cwd: request.cwd,
    projectRoots: request.projectRoots,
    tmpdir: variable(request.env, 'TEMP') || variable(request.env, 'TMP') || undefined,
    homeDir: variable(request.env, 'USERPROFILE') || undefined,
    pathStyle: 'win32',
  };
  const layout = resolveSandboxLayout(request.policy, context, facts.fs, {
    homeDir: context.homeDir,
    pathDirectories: (variable(request.env, 'PATH') ?? '').split(';').filter((dir) => win32.isAbsolute(dir)),
  });
  if (!layout.readAll) {
    throw invalid(
      'policy',
      'restricted reads need the elevated Windows sandbox (a separate sandbox user); the restricted-token backend can only limit writes, so grant a readable root',
    );
  }
  if (layout.unreadable.length > 0 || layout.unreadableGlobs.length > 0) {
    throw invalid(
      'policy',
      `deny-read entries (${[...layout.unreadable, ...layout.unreadableGlobs].join(', ')}) need the elevated Windows sandbox; a write-restricted token cannot hide files from reads`,
    );
  }
  for (const { root } of layout.writableRoots) {
    const normal = normalizeWin32Path(root);
    if (win32.parse(normal).root === normal) {
      throw invalid(
        'policy',
        `${normal} is a whole drive or share; granting it would rewrite the ACL of every file on it`,
      );
    }
  }

  // The one predicate (`protectedEntryFor`): a path is protected when any writable root holding it
  // protects it, or when one of ux's hidden directories holds it. A writable root inside a protected
  // path gets no grant: a deeper writable entry does not re-grant what another root protects.
  const protectedBy = (path: string) => protectedEntryFor(layout, path, 'win32');
  const ungranted: string[] = [];
  const granted = layout.writableRoots.filter(({ root }) => {
    const entry = protectedBy(root);
    if (entry === undefined) return true;
    const within = normalizeWin32Path(entry.path);
    const normal = normalizeWin32Path(root);
    ungranted.push(
      `writable root ${normal} ${comparable(within) === comparable(normal) ? 'is itself protected' : `lies inside the protected path ${within}`} (${entry.why}), so nothing was granted for it`,
    );
    return false;
  });
  const roots = granted.map((root) => ({
    root: normalizeWin32Path(root.root),
    readOnly: root.readOnly
      .filter((entry) => protectedBy(entry.path) !== undefined)
      .map((entry) => ({ ...entry, path: normalizeWin32Path(entry.path) })),
  }));
  const insideRoots = (path: string) => roots.some(({ root }) => isUnder(path, root, 'win32'));

  const persist = facts.persistGrants ?? true;
  const capabilitySid = capabilitySidFor(
    sandboxId,
    roots.map(({ root }) => root),
  );
  const aces: WindowsAce[] = roots.map(({ root }) => ({
    path: win32ApiPath(root),
    trustee: persist ? 'capability' : 'run',
    type: 'allow',
    mask: SANDBOX_ALLOW_MASK,
    flags: CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE,
    undo: persist ? 'never' : 'after-run',
    why: 'writable root',
  }));

  const privateTmp = layout.privateTmp ? privateTmpPath(facts, layout) : undefined;
  if (privateTmp !== undefined) {
    // Granted per run, to the run SID: a capability-SID grant would be kept (and shared by every
    // session with the same roots), and the directory is this backend's alone.
    aces.push({
      path: win32ApiPath(privateTmp),
      trustee: 'run',
      type: 'allow',
      mask: SANDBOX_ALLOW_MASK,
      flags: CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE,
      undo: 'after-run',
      why: "the session's private temporary directory (TEMP and TMP point at it)",
    });
  }

  // Deny entries: every protected path inside the granted roots, whichever root protects it; ux's
  // hidden directories inside them; what the launch reads inside them.
  const carveOuts: { path: string; kind: 'file' | 'dir' | 'symlink' | 'missing'; why: string }[] = [];
  for (const { readOnly } of roots) carveOuts.push(...readOnly);
  for (const hidden of layout.hidden) {
    const path = normalizeWin32Path(hidden);
    if (insideRoots(path))
      carveOuts.push({
        path,
        kind: 'dir',
        why: "ux's own runtime files or quarantine: unwritable to commands (a write-restricted token cannot hide them from reads)",
      });
  }
  const writableHostPaths: string[] = [];
  for (const given of request.hostPaths ?? []) {
    if (!win32.isAbsolute(given)) continue;
    const kind = facts.fs.kind(given);
    if (kind === undefined) continue;
    const path = normalizeWin32Path(canonicalize(given, facts.fs, 'win32'));
    if (roots.some(({ root }) => isUnder(root, path, 'win32'))) writableHostPaths.push(path);
    else if (insideRoots(path) && protectedBy(path) === undefined)
      carveOuts.push({
        path,
        kind: facts.fs.kind(path) === 'dir' ? 'dir' : 'file',
        why: 'read by the launch itself: never writable',
      });
  }

  const missing: string[] = [];
  const guarded = new Map<string, string>();
  const protectedSeen = new Set<string>();
  const guard = (path: string) => {
    // Renaming a parent would carry the path out from under its ACE.
    for (
      let parent = win32.dirname(path);
      roots.some((r) => isUnder(parent, r.root, 'win32'));
      parent = win32.dirname(parent)
    ) {
      if (!guarded.has(parent.toLowerCase())) guarded.set(parent.toLowerCase(), parent);
      if (win32.dirname(parent) === parent) break;
    }
  };
  for (const entry of carveOuts) {
    const key = entry.path.toLowerCase();
    if (protectedSeen.has(key)) continue;
    protectedSeen.add(key);
    if (entry.kind === 'missing') {
      missing.push(entry.path);
      continue;
    }
    aces.push({
      path: win32ApiPath(entry.path),
      trustee: 'run',
      type: 'deny',
      mask: SANDBOX_DENY_WRITE_MASK,
      flags: entry.kind === 'dir' ? CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE : 0,
      undo: 'after-run',
      why: entry.why,
    });
    guard(entry.path);
  }
  // A private /tmp inside a writable root (the workspace holds %TEMP%): its place cannot be swapped.
  if (privateTmp !== undefined && insideRoots(privateTmp)) guard(privateTmp);
  for (const parent of [...guarded.values()].sort((a, b) => a.localeCompare(b))) {
    aces.push({
      path: win32ApiPath(parent),
      trustee: 'run',
      type: 'deny',
      mask: SANDBOX_DENY_MOVE_MASK,
      flags: 0,
      undo: 'after-run',
      why: 'parent of a protected path: no rename, no delete-child bypass',
    });
  }

  if (missing.length > 0) {
    const shown = missing.slice(0, 4).join(', ');
    notes.push(
      `protected paths that do not exist cannot carry an ACL, so creating them is not blocked: ${shown}${missing.length > 4 ? ` and ${missing.length - 4} more` : ''}`,
    );
  }
  for (const path of layout.missingWritableRoots)
    notes.push(`writable root ${path} does not exist, so nothing was granted for it`);
  notes.push(...ungranted);
  if (privateTmp !== undefined) {
    notes.push(
      `private temporary directory: commands get ${privateTmp} (TEMP and TMP point at it); the host's %TEMP% is not writable. Unlike Linux, where it is mounted at /tmp, a program that writes to a fixed temporary path (C:\\Windows\\Temp, or %LOCALAPPDATA%\\Temp spelled out) cannot write its files`,
    );
    if (insideRoots(privateTmp))
      notes.push(
        `the private temporary directory lies inside a writable root, so other commands that can write that root can write it too`,
      );
  }
  if (layout.hidden.length > 0) {
    notes.push(
      `ux's own directories are unwritable to commands but NOT hidden from reads (a write-restricted token cannot deny reads; that needs the elevated sandbox): ${layout.hidden.map(normalizeWin32Path).join(', ')}`,
    );
  }
  for (const path of writableHostPaths)
    notes.push(`${path}, which the launch reads, is or holds a writable root, so it stays writable`);
  notes.push(
    'objects whose ACL grants write to Everyone or to the logon session stay writable (the token must keep those SIDs to run)',
  );

  if (privateTmp !== undefined) {
    // The one change to the request's variables: the host's temporary directory is not writable.
    for (const name of [
      'TEMP',
      'TMP',
      ...(variable(request.env, 'TMPDIR') === undefined ? [] : ['TMPDIR']),
    ]) {
      const present = Object.keys(env).find((candidate) => candidate.toUpperCase() === name) ?? name;
      env[present] = privateTmp;
      added[present] = privateTmp;
    }
  }

  const launch: WindowsTokenLaunchSpec = {
    version: 1,
    sandboxId,
    capabilitySid,
    token: {
      flags: DISABLE_MAX_PRIVILEGE | LUA_TOKEN | WRITE_RESTRICTED,
      restrictingSids: [capabilitySid, '<run>', '<logon>', EVERYONE_SID],
    },
    aces,
    tty: request.tty,
  };
  const argv = [
    facts.nodePath,
    facts.launcherPath,
    '--plan',
    encodeLaunchSpec(launch),
    '--',
    ...request.argv,
  ];
  const length = windowsCommandLine(argv, { tool: 'sandbox plan' }).length;
  if (length > MAX_COMMAND_LINE) {
    throw invalid(
      'policy',
      `the launcher's command line would be ${length} characters, over Windows' ${MAX_COMMAND_LINE}`,
    );
  }
  const enforcement: SandboxEnforcement = {
    fileSystem: 'enforced',
    network: network === 'restricted' ? 'advisory' : 'enforced',
    notes,
  };
  return {
    argv,
    cwd: request.cwd,
    env,
    sandboxType: 'windows-token',
    enforcement,
    sandboxId,
    capabilitySid,
    token: launch.token,
    aces,
    commandLine,
    envAdded: added,
    launch,
  };
}

/**
 * Fails closed on the network settings this backend cannot enforce: a proxied network (nothing here
 * can keep a command from going around the proxy; even blocking the network is advisory) and a unix
 * socket allow-list (nothing here limits which sockets or pipes a command connects to, so a list would
 * promise that the rest are closed).
 */
function refuseUnenforceableNetwork(request: SandboxPlanRequest): void {
  const policy = request.policy;
  if (policy.network === 'proxied') {
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason:
        'network by domain (network "proxied") is not supported on Windows yet: the restricted-token sandbox cannot keep a command from going around the proxy (it cannot even block the network; that needs the elevated set-up, a sandbox user and a firewall rule)',
      fix: 'set the network "on" to allow every host, or "off" to allow none (advisory on Windows: proxies pointed at a closed port)',
    });
  }
  const sockets = policy.allowUnixSockets ?? [];
  if (sockets.length > 0) {
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason: `a unix socket allow-list (allowUnixSockets: ${sockets.join(', ')}) is not supported on Windows: the restricted-token sandbox cannot limit which unix sockets or named pipes a command connects to, so it cannot keep the others closed`,
      fix: 'leave allowUnixSockets empty on Windows (the plan notes say what stays reachable), or run the command on macOS or Linux, where the list is enforced',
    });
  }
}

/**
 * The private temporary directory, canonical: absolute, and never a writable root's ancestor or the
 * root itself (its grant would widen the root's, and its removal at the end would take the root).
 */
function privateTmpPath(facts: WindowsTokenHostFacts, layout: SandboxLayout): string {
  const given = typeof facts.privateTmpDir === 'function' ? facts.privateTmpDir() : facts.privateTmpDir;
  if (given === undefined) {
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason:
        'the policy gives commands a private temporary directory (privateTmp), but the planner was given none',
      fix: 'plan through createWindowsTokenSandbox(), which makes one, or pass privateTmpDir',
    });
  }
  if (!win32.isAbsolute(given))
    throw invalid(
      'policy',
      `the private temporary directory must be an absolute path, got ${JSON.stringify(given)}`,
    );
  const path = normalizeWin32Path(canonicalize(given, facts.fs, 'win32'));
  const holds = layout.writableRoots.find(({ root }) => isUnder(root, path, 'win32'));
  if (holds !== undefined) {
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason: `the private temporary directory ${path} is or holds the writable root ${normalizeWin32Path(holds.root)}`,
      fix: 'leave privateTmpDir unset (ux keeps it in its runtime directory) or choose a directory of its own',
    });
  }
  return path;
}

function comparable(path: string): string {
  return path.replace(/\//g, '\\').toLowerCase();
}

/** A variable by its Windows (case-insensitive) name. */
function variable(env: Readonly<Record<string, string>>, name: string): string | undefined {
  const key = Object.keys(env).find((candidate) => candidate.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

function invalid(path: string, message: string): InvalidArgumentsError {
  return new InvalidArgumentsError({ tool: 'sandbox plan', issues: [{ path, message }] });
}
