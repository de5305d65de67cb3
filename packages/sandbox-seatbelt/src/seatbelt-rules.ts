import { posix } from 'node:path';
import {
  canonicalize,
  type FsView,
  InvalidArgumentsError,
  isUnder,
  type NetworkPolicy,
  type PolicyContext,
  resolveEntries,
  resolveSandboxLayout,
  type SandboxPlanRequest,
} from '@ux/protocol/core';
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
}

/**
 * Makes a request's policy concrete for Seatbelt through the shared layout (`resolveSandboxLayout`: the same
 * writable roots, protected paths and deny-read sets every backend enforces), in the spelling Seatbelt
 * matches: symlinks resolved, `/tmp`, `/var` and `/etc` under `/private`.
 */
export function seatbeltRules(request: SandboxPlanRequest, fs: FsView): SeatbeltRules {
  const policy = request.policy;
  const context: PolicyContext = {
    cwd: request.cwd,
    projectRoots: request.projectRoots,
    tmpdir: request.env.TMPDIR || undefined,
    homeDir: request.env.HOME || undefined,
  };
  const layout = resolveSandboxLayout(policy, context, fs, { homeDir: context.homeDir });
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
    };
  }

  // Roots are canonical already; the /private spelling can make two of them one.
  const roots: { root: string; readOnly: string[] }[] = [];
  // A file is excluded alone; anything else (a directory, a link, a missing path) with its subtree.
  const fileOnly = new Set<string>();
  const subtree = new Set<string>();
  for (const { root, readOnly } of layout.writableRoots) {
    const spelled = withPrivatePrefix(root);
    const paths = readOnly.map((entry) => {
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

  // A carve-out of an outer root that lies inside a deeper writable root was granted by that deeper
  // entry (the most specific entry wins), so it is not protected.
  const isDeeperRoot = (path: string, than: string) =>
    roots.some((other) => depth(other.root) > depth(than) && isUnder(path, other.root));
  const carveOuts = unique(
    roots.flatMap(({ root, readOnly }) => readOnly.filter((path) => !isDeeperRoot(path, root))),
  );

  // Seatbelt allows are a union: an outer root must exclude what an inner root protects as well.
  const writableRoots = roots.map(({ root }) => ({
    root,
    excluded: unique([...carveOuts, ...unreadable].filter((path) => isUnder(path, root))).map((path) => {
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
    ...[...carveOuts, ...unreadable].map((path) => posix.dirname(path)),
    ...deniedGlobs.map((glob) => glob.base),
  ];
  for (const start of starts) {
    for (let dir = start; dir !== '/' && underSomeRoot(dir); dir = posix.dirname(dir)) guards.add(dir);
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
  };
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
