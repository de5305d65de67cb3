import { posix, win32 } from 'node:path';
import type { EffectivePolicy, NetworkPolicy, NetworkProxyEndpoint } from '@ux/protocol/core';
import { InvalidArgumentsError } from '@ux/protocol/core';
import type { FsView } from './fs-view.js';
import { type ProtectedPath, type ProtectedPathsOptions, protectedPaths } from './protected-paths.js';
import { type PolicyContext, resolveEntries } from './resolve-entries.js';

/** One writable root with what must stay read-only inside it. */
export interface WritableRootLayout {
  /** Canonical path (symlinks of the root itself resolved). */
  root: string;
  /** Carve-outs: protected paths (git config and hooks, metadata, start-up files) and narrower `read` entries. */
  readOnly: ProtectedPath[];
}

/** The concrete sets every backend enforces for one run (docs/reference/sandbox.md §3). */
export interface SandboxLayout {
  /** Whole-disk read (a readable `root` entry). */
  readAll: boolean;
  /** With restricted reads: the roots that stay readable (existing only). */
  readableRoots: string[];
  /** Existing writable roots, outermost first. */
  writableRoots: WritableRootLayout[];
  /** Writable entries that do not exist, so nothing was granted for them. */
  missingWritableRoots: string[];
  /** `none` paths (masked; missing ones too, so they cannot be created and read later). */
  unreadable: string[];
  /** `none` glob patterns, absolute. */
  unreadableGlobs: string[];
  network: NetworkPolicy;
  /** Set exactly when `network` is `proxied`. */
  networkProxy?: NetworkProxyEndpoint;
  /** Unix sockets outside the sandbox the command may connect to (absolute, as given); often empty. */
  allowUnixSockets: string[];
  /**
   * The policy's `privateTmp` took effect: the host's `/tmp` and `$TMPDIR` are not among the writable
   * roots, and the backend must put a private directory of the session in their place.
   */
  privateTmp: boolean;
  /** ux's own directories to mask (`hostState.hidden`, existing ones, canonical). */
  hidden: string[];
}

/**
 * Makes a policy concrete for one run: canonical writable roots with their protected carve-outs,
 * readable and unreadable sets, network. Paths are POSIX unless `context.pathStyle` is `win32`, in which
 * case they are Windows paths (compared case-insensitively) and a drive or share root counts as `/`.
 */
export function resolveSandboxLayout(
  policy: EffectivePolicy,
  context: PolicyContext,
  fs: FsView,
  options: ProtectedPathsOptions & {
    /**
     * Only the roots: every `readOnly` list left empty, nothing protected looked up (about a
     * millisecond per root). For a caller that needs where the sandbox can write, not what it keeps.
     */
    rootsOnly?: boolean;
  } = {},
): SandboxLayout {
  const layout: SandboxLayout = {
    readAll: policy.fileSystem.kind !== 'restricted',
    readableRoots: [],
    writableRoots: [],
    missingWritableRoots: [],
    unreadable: [],
    unreadableGlobs: [],
    network: policy.network,
    ...checkedNetwork(policy, context.pathStyle ?? 'posix'),
    privateTmp: false,
    hidden: [],
  };
  if (policy.fileSystem.kind !== 'restricted') return layout;
  const style = context.pathStyle ?? 'posix';
  const entries = resolveEntries(policy.fileSystem, context);
  const canonical = (path: string) => canonicalize(path, fs, style);

  layout.hidden = [
    ...new Set((policy.hostState?.hidden ?? []).filter((path) => fs.kind(path) !== undefined).map(canonical)),
  ];
  const writable = new Set<string>();
  const readOnlyEntries: string[] = [];
  for (const entry of entries) {
    if (policy.privateTmp && entry.access === 'write' && isTmpEntry(entry.entry)) {
      layout.privateTmp = true;
      continue;
    }
    if (entry.target.kind === 'glob') {
      if (entry.access === 'none') layout.unreadableGlobs.push(entry.target.pattern);
      continue;
    }
    const path = entry.target.path;
    if (entry.access === 'write') {
      if (fs.kind(path) === undefined) layout.missingWritableRoots.push(path);
      else writable.add(canonical(path));
    } else if (entry.access === 'read') {
      if (isFileSystemRoot(path, style)) layout.readAll = true;
      else readOnlyEntries.push(path);
    } else {
      layout.unreadable.push(canonical(path));
    }
  }
  // `/` written as a writable root means full-disk write: nothing narrower is protected by a bind.
  const roots = [...writable].sort((a, b) => depth(a, style) - depth(b, style) || a.localeCompare(b));
  const { rootsOnly, ...protectOptions } = options;
  const hostReadOnly = rootsOnly ? [] : (policy.hostState?.readOnly ?? []).map(canonical);
  const workspaces = rootsOnly
    ? []
    : [...new Set([context.cwd, ...(context.projectRoots ?? [])].map(canonical))];
  const repositories = rootsOnly ? [] : (policy.knownRepositories ?? []).map(canonical);
  for (const root of roots) {
    if (rootsOnly) {
      layout.writableRoots.push({ root, readOnly: [] });
      continue;
    }
    const readOnly = protectedPaths(root, fs, {
      ...protectOptions,
      pathStyle: style,
      ...(repositories.length > 0 ? { repositories } : {}),
      workspaces,
    });
    for (const path of hostReadOnly) {
      if (!isUnder(path, root, style) || samePath(path, root, style)) continue;
      if (readOnly.some((entry) => samePath(entry.path, path, style))) continue;
      const kind = fs.kind(path);
      readOnly.push({
        path,
        kind: kind === undefined ? 'missing' : kind === 'other' ? 'file' : kind,
        why: "ux's own state (configuration, rules, requirements or programs that ux trusts outside the sandbox)",
      });
    }
    for (const path of readOnlyEntries) {
      if (isUnder(path, root, style) && !samePath(path, root, style)) {
        const kind = fs.kind(path);
        readOnly.push({
          path,
          kind: kind === undefined ? 'missing' : kind === 'other' ? 'file' : kind,
          why: 'read-only entry of the policy',
          fromPolicy: true,
        });
      }
    }
    layout.writableRoots.push({ root, readOnly });
  }
  if (!layout.readAll) {
    layout.readableRoots = [
      ...new Set(readOnlyEntries.filter((path) => fs.kind(path) !== undefined).map(canonical)),
    ];
  }
  return layout;
}

/**
 * The protected entry that covers `path`, if any: a path is protected when ANY writable root that
 * contains it protects it (a workspace inside `/tmp` keeps its own `.git/config` read-only, though
 * `/tmp` is a writable root too), or when it lies in one of ux's hidden directories. `path` is
 * canonical (symlinks resolved), as the kernel sees it. The one predicate behind every backend's plan,
 * the path guard's targets and the door's own writers (`apply_patch`).
 */
export function protectedEntryFor(
  layout: Pick<SandboxLayout, 'writableRoots' | 'hidden'>,
  path: string,
  pathStyle: 'posix' | 'win32' = 'posix',
): ProtectedPath | undefined {
  for (const hidden of layout.hidden ?? []) {
    if (isUnder(path, hidden, pathStyle))
      return { path: hidden, kind: 'dir', why: "ux's own runtime files, hidden from every sandbox" };
  }
  for (const { root, readOnly } of layout.writableRoots) {
    if (!isUnder(path, root, pathStyle)) continue;
    const entry = readOnly.find(
      (candidate) =>
        isUnder(path, candidate.path, pathStyle) &&
        // A policy's own read entry yields to a deeper writable root inside it (most specific wins).
        !(
          candidate.fromPolicy &&
          layout.writableRoots.some(
            (deeper) =>
              isUnder(deeper.root, candidate.path, pathStyle) &&
              deeper.root !== candidate.path &&
              isUnder(path, deeper.root, pathStyle),
          )
        ),
    );
    if (entry) return entry;
  }
  return undefined;
}

/** `slash_tmp` and `tmpdir`: what `privateTmp` replaces. */
function isTmpEntry(entry: { path: { type: string; value?: string } }): boolean {
  return entry.path.type === 'special' && (entry.path.value === 'slash_tmp' || entry.path.value === 'tmpdir');
}

/** Resolves symlinks in the existing part of a path and re-joins the missing tail. */
export function canonicalize(path: string, fs: FsView, pathStyle: 'posix' | 'win32' = 'posix'): string {
  const api = pathStyle === 'win32' ? win32 : posix;
  const missing: string[] = [];
  let current = api.normalize(path);
  for (;;) {
    const real = fs.realpath(current);
    if (real !== undefined) return missing.length === 0 ? real : api.join(real, ...missing.reverse());
    const parent = api.dirname(current);
    if (parent === current) return path;
    missing.push(api.basename(current));
    current = parent;
  }
}

/** Whether `path` is `root` or below it. Windows paths compare case-insensitively, either separator. */
export function isUnder(path: string, root: string, pathStyle: 'posix' | 'win32' = 'posix'): boolean {
  if (pathStyle === 'posix') {
    return root === '/' ? path.startsWith('/') : path === root || path.startsWith(`${root}/`);
  }
  const p = comparableWin32(path);
  const r = comparableWin32(root);
  return r.endsWith('/') ? p.startsWith(r) : p === r || p.startsWith(`${r}/`);
}

function samePath(a: string, b: string, style: 'posix' | 'win32'): boolean {
  return style === 'posix' ? a === b : comparableWin32(a) === comparableWin32(b);
}

/** `/` itself, or a Windows drive or share root (`C:\`, `\\server\share\`). */
function isFileSystemRoot(path: string, style: 'posix' | 'win32'): boolean {
  return style === 'posix' ? path === '/' : win32.parse(path).root === path;
}

function comparableWin32(path: string): string {
  return path.replace(/\\/g, '/').toLowerCase();
}

function depth(path: string, style: 'posix' | 'win32'): number {
  if (style === 'posix') return path.split('/').filter(Boolean).length;
  return path.split(/[\\/]+/).filter((part) => part !== '' && !/^[A-Za-z]:$/.test(part)).length;
}

/**
 * The proxy endpoint and the unix socket allow-list, checked: a proxied policy names the proxy's
 * absolute socket path (and a port, when given, that is one); every listed unix socket is absolute.
 */
function checkedNetwork(
  policy: EffectivePolicy,
  style: 'posix' | 'win32',
): { networkProxy?: NetworkProxyEndpoint; allowUnixSockets: string[] } {
  const issues: { path: string; message: string }[] = [];
  const absolute = (path: unknown) =>
    typeof path === 'string' && (style === 'win32' ? win32.isAbsolute(path) : path.startsWith('/'));
  const proxy = policy.networkProxy;
  if (policy.network === 'proxied') {
    if (!proxy || !absolute(proxy.unixSocket))
      issues.push({
        path: 'networkProxy.unixSocket',
        message: `network "proxied" needs the proxy's socket as an absolute path, got ${JSON.stringify(proxy?.unixSocket) ?? 'none'}`,
      });
    const port = proxy?.loopbackPort;
    if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535))
      issues.push({
        path: 'networkProxy.loopbackPort',
        message: `must be a port from 1 to 65535, got ${port}`,
      });
  }
  const sockets = policy.allowUnixSockets ?? [];
  if (!Array.isArray(sockets))
    issues.push({ path: 'allowUnixSockets', message: 'must be a list of absolute paths' });
  else
    for (const [index, path] of sockets.entries())
      if (!absolute(path))
        issues.push({
          path: `allowUnixSockets[${index}]`,
          message: `must be an absolute path, got ${JSON.stringify(path)}`,
        });
  if (issues.length > 0) throw new InvalidArgumentsError({ tool: 'sandbox policy', issues });
  return {
    ...(policy.network === 'proxied' && proxy ? { networkProxy: { ...proxy } } : {}),
    allowUnixSockets: Array.isArray(sockets) ? [...new Set(sockets)] : [],
  };
}
