import { posix } from 'node:path';
import {
  InvalidArgumentsError,
  type NetworkPolicy,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import {
  canonicalize,
  type FsView,
  isUnder,
  type PolicyContext,
  protectedEntryFor,
  resolveEntries,
  resolveSandboxLayout,
} from '@ux/protocol-utils';
import { macosPath, withPrivatePrefix } from './macos-path.js';
import { sbplGlobRegex, splitGlob } from './sbpl-glob-regex.js';
import { sbplPathRegex } from './sbpl-path-regex.js';
import { SBPL_STRING_MAX_BYTES, utf8Length } from './sbpl-text.js';

/** One read rule; Seatbelt lets the later of two matching rules win, so order matters. */
export interface SeatbeltReadRule {
  /** Canonical path (`/` with `allow` and nothing else means every path). */
  path: string;
  access: 'allow' | 'deny';
}

export interface SeatbeltWritableRoot {
  root: string;
  /** Paths below the root that stay unwritable in every letter case: protected paths and deny-read paths. */
  excluded: SeatbeltExcludedPath[];
}

/** One path a writable root's write rule leaves out. */
export interface SeatbeltExcludedPath {
  /** Canonical path below (or at) the root. */
  path: string;
  /** Everything below it too: a directory, a link, a path that must not be created, a deny-read path. A file is matched alone. */
  subtree: boolean;
  /** SBPL regex for every letter-case spelling of the path (see `sbplPathRegex`), paired with the root's `subpath`. */
  regex: string;
}

/** A directory that must not be renamed, deleted or replaced, in any letter case. */
export interface SeatbeltMoveGuard {
  /** Canonical path of the directory. */
  path: string;
  /** The outermost writable root holding it (every spelling a write rule grants starts with that root). */
  root: string;
  /** SBPL regex for every letter-case spelling of `path` below `root`. */
  regex: string;
}

export interface SeatbeltDeniedGlob {
  /** The absolute glob as the policy gave it (for comments and errors). */
  pattern: string;
  /** Canonical literal directory the glob starts from. */
  base: string;
  /** SBPL regex for the rest (see `sbplGlobRegex`). */
  regex: string;
}

/** A file or directory the launch itself reads inside the sandbox (`SandboxPlanRequest.hostPaths`). */
export interface SeatbeltHostPath {
  /** Canonical macOS spelling (a link is kept as the link; its target is listed as well). */
  path: string;
  /** A directory: everything below it is readable too. */
  subtree: boolean;
}

/** A writable root that lies inside a protected path or one of ux's hidden directories: nothing is granted for it. */
export interface SeatbeltUngrantedRoot {
  root: string;
  /** The protected path that holds it. */
  within: string;
  why: string;
}

/** Everything a Seatbelt profile enforces for one request, as canonical macOS paths. */
export interface SeatbeltRules {
  fileSystem: 'restricted' | 'unrestricted';
  /** Read rules, broader first; at equal depth a deny follows an allow so `none` beats `read`. */
  reads: SeatbeltReadRule[];
  /** Reads are limited to listed roots (no readable `root` entry). */
  restrictedReads: boolean;
  /** The policy grants `minimal`: the platform's own libraries and tools stay readable. */
  platformDefaults: boolean;
  writableRoots: SeatbeltWritableRoot[];
  /** Directories that must not be renamed, deleted or created: every parent, inside a writable root, of a protected or deny-read path. */
  moveGuards: SeatbeltMoveGuard[];
  deniedGlobs: SeatbeltDeniedGlob[];
  network: NetworkPolicy;
  /** With `network: 'proxied'`: the port the host's proxy listens on at 127.0.0.1 (absent when not given). */
  proxyLoopbackPort?: number;
  /**
   * Unix sockets the command may connect to, in every network mode: the policy's list, canonical
   * (symlinks resolved, the last one too, since connecting follows it; `/private` spellings), no duplicates.
   */
  unixSockets: string[];
  /** Writable entries that do not exist; nothing is granted for them. */
  missingWritableRoots: string[];
  /** Writable roots inside a protected path (`protectedEntryFor`), so not granted. */
  ungrantedRoots: SeatbeltUngrantedRoot[];
  /** ux's own directories (`hostState.hidden`): no reads, no writes, whatever else the profile allows. */
  hidden: string[];
  /**
   * The private temporary directory that replaces the host's `/tmp` and `$TMPDIR` (`privateTmp`):
   * readable and writable, `TMPDIR` points at it. Absent when the policy has no private `/tmp`.
   */
  privateTmp?: string;
  /** What the launch reads (`hostPaths`): readable whatever else the profile hides, never writable. */
  hostPaths: SeatbeltHostPath[];
  /**
   * Directories whose metadata stays readable although a hidden directory holds them: the parents of the
   * private temporary directory and of host paths, so `realpath()` and `getcwd()` work there.
   */
  metadataPaths: string[];
  /** Host paths that hold or are a writable root, so they stay as writable as the root makes them. */
  writableHostPaths: string[];
}

/** What the planner needs besides the request and the file system. */
export interface SeatbeltRulesOptions {
  /**
   * The private temporary directory for a policy with `privateTmp` (absolute), or a function that makes
   * it, called only when the layout has a private `/tmp`. Without it such a policy is refused.
   */
  privateTmpDir?: string | (() => string);
}

/**
 * Makes a request's policy concrete for Seatbelt through the shared layout (`resolveSandboxLayout`: the same
 * writable roots, protected paths, deny-read sets, ux's hidden directories and private `/tmp` every
 * backend enforces; `protectedEntryFor` decides what is protected), in the spelling Seatbelt matches:
 * symlinks resolved, `/tmp`, `/var` and `/etc` under `/private`. Host paths (`request.hostPaths`) stay
 * readable and, inside a writable root, become carve-outs.
 */
export function seatbeltRules(
  request: SandboxPlanRequest,
  fs: FsView,
  options: SeatbeltRulesOptions = {},
): SeatbeltRules {
  const policy = request.policy;
  const context: PolicyContext = {
    cwd: request.cwd,
    projectRoots: request.projectRoots,
    tmpdir: request.env.TMPDIR || undefined,
    homeDir: request.env.HOME || undefined,
  };
  const layout = resolveSandboxLayout(policy, context, fs, {
    homeDir: context.homeDir,
    pathDirectories: (request.env.PATH ?? '').split(':').filter((dir) => dir.startsWith('/')),
  });
  const network = {
    network: layout.network,
    ...(layout.networkProxy?.loopbackPort === undefined
      ? {}
      : { proxyLoopbackPort: layout.networkProxy.loopbackPort }),
    unixSockets: unique(layout.allowUnixSockets.map((path) => withPrivatePrefix(canonicalize(path, fs)))),
  };
  if (policy.fileSystem.kind !== 'restricted') {
    return {
      fileSystem: 'unrestricted',
      reads: [{ path: '/', access: 'allow' }],
      restrictedReads: false,
      platformDefaults: false,
      writableRoots: [{ root: '/', excluded: [] }],
      moveGuards: [],
      deniedGlobs: [],
      ...network,
      missingWritableRoots: [],
      ungrantedRoots: [],
      hidden: [],
      hostPaths: [],
      metadataPaths: [],
      writableHostPaths: [],
    };
  }

  // The one predicate (`protectedEntryFor`): a path is protected when any writable root holding it
  // protects it, or when it lies in one of ux's hidden directories. Paths here are the layout's
  // (canonical, before the /private spelling).
  const protectedBy = (path: string) => protectedEntryFor(layout, path);
  // A writable root inside a protected path (an outer root's carve-out, ux's own state) gets nothing:
  // a deeper writable entry does not re-grant what another root protects.
  const ungrantedRoots: SeatbeltUngrantedRoot[] = [];
  const granted = layout.writableRoots.filter(({ root }) => {
    const entry = protectedBy(root);
    if (entry === undefined) return true;
    ungrantedRoots.push({ root: withPrivatePrefix(root), within: macosPath(entry.path, fs), why: entry.why });
    return false;
  });
  const grantedRoots = granted.map(({ root }) => root);

  // Roots are canonical already; the /private spelling can make two of them one.
  const roots: { root: string; readOnly: string[] }[] = [];
  // A file is excluded alone; anything else (a directory, a link, a missing path) with its subtree.
  const fileOnly = new Set<string>();
  const subtree = new Set<string>();
  for (const { root, readOnly } of granted) {
    const spelled = withPrivatePrefix(root);
    const paths = readOnly
      .filter((entry) => protectedBy(entry.path) !== undefined)
      .map((entry) => {
        const path = macosPath(entry.path, fs);
        (entry.kind === 'file' ? fileOnly : subtree).add(path);
        return path;
      });
    const existing = roots.find((candidate) => candidate.root === spelled);
    if (existing) existing.readOnly.push(...paths.filter((path) => !existing.readOnly.includes(path)));
    else roots.push({ root: spelled, readOnly: paths });
  }
  const unreadable = unique(layout.unreadable.map(withPrivatePrefix));
  for (const path of unreadable) subtree.add(path);
  const hidden = unique(layout.hidden.map(withPrivatePrefix));
  for (const path of hidden) subtree.add(path);

  const insideGranted = (path: string) => grantedRoots.some((root) => isUnder(path, root));
  // A path listed twice keeps the wider form (a directory with its subtree).
  const hostPaths = new Map<string, boolean>();
  const readable = (path: string, whole: boolean) =>
    hostPaths.set(path, whole || hostPaths.get(path) === true);
  const hostCarveOuts: string[] = [];
  const writableHostPaths: string[] = [];
  for (const given of request.hostPaths ?? []) {
    if (!posix.isAbsolute(given) || fs.kind(given) === undefined) continue;
    const real = canonicalize(given, fs);
    const spelled = macosPath(given, fs);
    const target = withPrivatePrefix(real);
    const subtreeRead = fs.kind(real) === 'dir';
    // A link is readable as the link (to follow it) and as what it points to.
    readable(spelled, spelled === target && subtreeRead);
    if (target !== spelled) readable(target, subtreeRead);
    // Never writable: one inside a writable root becomes a carve-out, like a protected path. One that
    // is or holds a writable root cannot be, without taking the root away.
    if (grantedRoots.some((root) => isUnder(root, real))) writableHostPaths.push(target);
    else if (insideGranted(real) && protectedBy(real) === undefined) {
      hostCarveOuts.push(target);
      (subtreeRead ? subtree : fileOnly).add(target);
    }
  }

  const carveOuts = unique([...roots.flatMap(({ readOnly }) => readOnly), ...hostCarveOuts]);
  // Seatbelt allows are a union: every root excludes every protected path below it, whichever root
  // protects it, and the deny-read paths and ux's hidden directories below it.
  const excludedBelow = [...carveOuts, ...unreadable, ...hidden];
  const writableRoots = roots.map(({ root }) => ({
    root,
    excluded: unique(excludedBelow.filter((path) => isUnder(path, root))).map((path) => {
      const whole = subtree.has(path) || !fileOnly.has(path);
      return { path, subtree: whole, regex: belowRootRegex(path, root, whole) };
    }),
  }));

  const deniedGlobs = layout.unreadableGlobs.map((pattern) => deniedGlob(pattern, fs));

  // The outermost root holding a path: every spelling any write rule grants starts with its canonical spelling.
  const outermostRoot = (path: string) =>
    roots
      .filter(({ root }) => isUnder(path, root))
      .reduce<string | undefined>(
        (best, { root }) => (best === undefined || depth(root) < depth(best) ? root : best),
        undefined,
      );
  const underSomeRoot = (path: string) => outermostRoot(path) !== undefined;
  // A carve-out itself is already unwritable; its parents are not. A glob's base is guarded itself too:
  // renaming it moves every match out of the pattern.
  const guards = new Set<string>();
  const starts = [
    ...excludedBelow.filter(underSomeRoot).map((path) => posix.dirname(path)),
    ...deniedGlobs.map((glob) => glob.base),
  ];
  for (const start of starts) {
    for (let dir = start; dir !== '/' && underSomeRoot(dir); dir = posix.dirname(dir)) guards.add(dir);
  }

  const privateTmp = layout.privateTmp ? privateTmpPath(options, fs, grantedRoots) : undefined;
  // realpath() and getcwd() read the metadata of every parent; a hidden directory above the private
  // /tmp or a host path would fail them.
  const metadataPaths = new Set<string>();
  for (const start of [...(privateTmp ? [privateTmp] : []), ...hostPaths.keys()]) {
    for (let dir = posix.dirname(start); dir !== '/'; dir = posix.dirname(dir)) {
      if (hidden.some((path) => isUnder(dir, path))) metadataPaths.add(dir);
    }
  }

  return {
    fileSystem: 'restricted',
    reads: readRules(request, context, fs, layout.readAll, layout.readableRoots, roots, unreadable),
    restrictedReads: !layout.readAll,
    platformDefaults:
      !layout.readAll &&
      policy.fileSystem.entries.some(
        (entry) => entry.path.type === 'special' && entry.path.value === 'minimal' && entry.access !== 'none',
      ),
    writableRoots,
    moveGuards: [...guards].sort().map((path) => {
      const root = outermostRoot(path)!;
      return { path, root, regex: belowRootRegex(path, root, false) };
    }),
    deniedGlobs,
    ...network,
    missingWritableRoots: layout.missingWritableRoots,
    ungrantedRoots,
    hidden,
    ...(privateTmp ? { privateTmp } : {}),
    hostPaths: [...hostPaths].map(([path, whole]) => ({ path, subtree: whole })),
    metadataPaths: [...metadataPaths].sort(),
    writableHostPaths: unique(writableHostPaths),
  };
}

/**
 * The private temporary directory in Seatbelt's spelling, checked: absolute, and outside every writable
 * root (a command could otherwise replace it, and what ux removes at the end with it).
 */
function privateTmpPath(options: SeatbeltRulesOptions, fs: FsView, grantedRoots: string[]): string {
  const given = typeof options.privateTmpDir === 'function' ? options.privateTmpDir() : options.privateTmpDir;
  if (given === undefined) {
    throw new SandboxUnavailableError({
      backend: 'seatbelt',
      reason:
        'the policy gives commands a private /tmp (privateTmp), but the planner was given no directory for it',
      fix: 'plan through createSeatbeltSandbox(), which makes one, or pass privateTmpDir',
    });
  }
  if (!posix.isAbsolute(given) || posix.normalize(given) === '/') {
    throw policyError(
      `the private temporary directory must be an absolute path, got ${JSON.stringify(given)}`,
    );
  }
  const real = canonicalize(given, fs);
  const holder = grantedRoots.find((root) => isUnder(real, root));
  if (holder !== undefined) {
    throw new SandboxUnavailableError({
      backend: 'seatbelt',
      reason: `the private temporary directory ${real} lies inside the writable root ${holder}: commands could replace it, and what ux removes with it at the end`,
      fix: 'leave privateTmpDir unset (ux keeps it in its runtime directory) or choose a directory outside every writable root',
    });
  }
  return withPrivatePrefix(real);
}

function readRules(
  request: SandboxPlanRequest,
  context: PolicyContext,
  fs: FsView,
  readAll: boolean,
  readableRoots: string[],
  roots: { root: string }[],
  unreadable: string[],
): SeatbeltReadRule[] {
  const rules: SeatbeltReadRule[] = [];
  if (readAll) rules.push({ path: '/', access: 'allow' });
  else {
    for (const path of readableRoots) rules.push({ path: withPrivatePrefix(path), access: 'allow' });
    for (const { root } of roots) rules.push({ path: root, access: 'allow' });
  }
  for (const path of unreadable) rules.push({ path, access: 'deny' });
  // Readable or writable entries deeper than a deny-read path re-open it (the most specific entry wins).
  const reopened = [
    ...resolveEntries(request.policy.fileSystem, context).flatMap((entry) =>
      entry.access === 'read' && entry.target.kind === 'path' ? [macosPath(entry.target.path, fs)] : [],
    ),
    ...roots.map(({ root }) => root),
  ];
  for (const path of reopened) {
    if (unreadable.some((denied) => isUnder(path, denied) && depth(path) > depth(denied))) {
      rules.push({ path, access: 'allow' });
    }
  }
  const seen = new Set<string>();
  return rules
    .filter((rule) => {
      const key = `${rule.access} ${rule.path}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map((rule, index) => ({ rule, index }))
    .sort(
      (a, b) =>
        depth(a.rule.path) - depth(b.rule.path) ||
        (a.rule.access === b.rule.access ? 0 : a.rule.access === 'allow' ? -1 : 1) ||
        a.index - b.index,
    )
    .map(({ rule }) => rule);
}

function deniedGlob(pattern: string, fs: FsView): SeatbeltDeniedGlob {
  if (/[\u0000-\u001f\u007f]/.test(pattern)) {
    throw policyError(`deny-read glob ${JSON.stringify(pattern)} contains a control character`);
  }
  const { base, rest } = splitGlob(pattern);
  const canonicalBase = macosPath(base, fs);
  const regex = sbplGlobRegex(rest, depth(canonicalBase));
  if (utf8Length(regex) > SBPL_STRING_MAX_BYTES) {
    throw policyError(
      `deny-read glob ${JSON.stringify(pattern)} needs a ${utf8Length(regex)}-byte Seatbelt regex; the limit is ${SBPL_STRING_MAX_BYTES} bytes`,
    );
  }
  return { pattern, base: canonicalBase, regex };
}

/** `sbplPathRegex` for a path at or below a writable root, with the limit checked. */
function belowRootRegex(path: string, root: string, subtree: boolean): string {
  const relative = path === root ? '' : path.slice(root === '/' ? 1 : root.length + 1);
  const regex = sbplPathRegex(relative, depth(root), { subtree });
  if (utf8Length(regex) > SBPL_STRING_MAX_BYTES) {
    throw policyError(
      `writable root ${JSON.stringify(root)} is too deep: excluding ${JSON.stringify(path)} needs a ${utf8Length(regex)}-byte Seatbelt regex; the limit is ${SBPL_STRING_MAX_BYTES} bytes`,
    );
  }
  return regex;
}

function policyError(message: string): InvalidArgumentsError {
  return new InvalidArgumentsError({ tool: 'sandbox plan', issues: [{ path: 'policy', message }] });
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}
