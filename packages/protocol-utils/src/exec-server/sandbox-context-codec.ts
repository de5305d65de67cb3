import { isAbsolute, join } from 'node:path';
import type {
  EffectivePolicy,
  FileSystemEntry,
  FileSystemPath,
  SandboxContext,
  SandboxPlanRequest,
  WireFileSystemEntry,
  WirePermissions,
} from '@ux/protocol/core';
import {
  InvalidArgumentsError,
  invalidWireValue,
  type SpecialPathName,
  specialPathNames,
} from '@ux/protocol/core';
import { fileUriFromPath, pathFromFileUri } from './file-uri.js';

/** What a wire `sandbox` asks a server to enforce, in ux's policy terms. */
export interface DecodedSandboxContext {
  policy: EffectivePolicy;
  /** What `project_roots` entries resolve to: the `workspaceRoots`, or nothing (as Codex does). */
  projectRoots: string[];
}

/**
 * ux's effective policy as the wire `sandbox` of `process/start`, in the shape Codex's servers read
 * (snake_case inside `permissions`). The wire has no `cwd` special path and no relative paths: `cwd`
 * (with its subpath) becomes the concrete directory, relative paths and globs are anchored at the cwd,
 * `~` at the command's `HOME` (an `InvalidArgumentsError` without one). `projectRoots` default to the
 * cwd.
 */
export function encodeSandboxContext(request: SandboxPlanRequest): SandboxContext {
  return {
    permissions: encodePermissions(request.policy, request),
    cwd: fileUriFromPath(request.cwd),
    workspaceRoots: (request.projectRoots ?? [request.cwd]).map(fileUriFromPath),
    windowsSandboxLevel: 'disabled',
  };
}

function encodePermissions(policy: EffectivePolicy, request: SandboxPlanRequest): WirePermissions {
  const fs = policy.fileSystem;
  const network = wireNetwork(policy);
  if (fs.kind === 'external-sandbox') return { type: 'external', network };
  if (fs.kind === 'unrestricted') {
    return { type: 'managed', file_system: { type: 'unrestricted' }, network };
  }
  return {
    type: 'managed',
    file_system: {
      type: 'restricted',
      entries: fs.entries.map((entry) => encodeEntry(entry, request)),
      ...(fs.glob_scan_max_depth === undefined ? {} : { glob_scan_max_depth: fs.glob_scan_max_depth }),
    },
    network,
  };
}

/**
 * The wire knows the network on or off. A proxied network cannot travel: the proxy is this machine's,
 * and a server elsewhere has no way to it; nor can a unix socket allow-list. Refused rather than sent
 * as something wider or narrower.
 */
function wireNetwork(policy: EffectivePolicy): 'restricted' | 'enabled' {
  const issues: { path: string; message: string }[] = [];
  if (policy.network === 'proxied')
    issues.push({
      path: 'network',
      message:
        'network by domain (proxied) cannot be sent to an exec-server: the allow-list proxy runs on this machine; give the remote environment the network on or off',
    });
  if ((policy.allowUnixSockets ?? []).length > 0)
    issues.push({
      path: 'allowUnixSockets',
      message:
        'an exec-server cannot be told which unix sockets to allow; leave allow_unix_sockets empty for remote environments',
    });
  if (issues.length > 0) throw new InvalidArgumentsError({ tool: 'exec-server sandbox', issues });
  return policy.network as 'restricted' | 'enabled';
}

function encodeEntry(entry: FileSystemEntry, request: SandboxPlanRequest): WireFileSystemEntry {
  const access = entry.access === 'none' ? 'deny' : entry.access;
  const { path } = entry;
  switch (path.type) {
    case 'special':
      if (path.value === 'cwd') {
        const cwd = path.subpath ? join(request.cwd, path.subpath) : request.cwd;
        return { path: { type: 'path', path: fileUriFromPath(cwd) }, access };
      }
      return {
        path: {
          type: 'special',
          value: { kind: path.value, ...(path.subpath ? { subpath: path.subpath } : {}) },
        },
        access,
      };
    case 'path':
      return { path: { type: 'path', path: fileUriFromPath(absolute(path.path, request)) }, access };
    case 'glob':
      return { path: { type: 'glob_pattern', pattern: absolute(path.pattern, request) }, access };
  }
}

function absolute(path: string, request: SandboxPlanRequest): string {
  if (path === '~' || path.startsWith('~/')) {
    const home = request.env.HOME;
    if (!home) {
      throw new InvalidArgumentsError({
        tool: 'exec-server sandbox',
        issues: [{ path: 'policy', message: `${path} needs HOME in the command's environment` }],
      });
    }
    return join(home, path.slice(1));
  }
  return isAbsolute(path) ? path : join(request.cwd, path);
}

/**
 * Reads the wire `sandbox` of a `process/start` into an effective policy (the server's half of
 * `encodeSandboxContext`). `permissions: disabled` (or no sandbox) asks for none and gives `undefined`.
 * Anything it cannot express exactly (an unknown special path kind, a path that is not a `file://` URI)
 * is an `InvalidArgumentsError` addressed at the field (`sandbox.workspaceRoots[0]`): a sandbox is never
 * applied more loosely than asked. `glob_scan_max_depth` is clamped to 1–64.
 */
export function decodeSandboxContext(
  sandbox: SandboxContext | null | undefined,
): DecodedSandboxContext | undefined {
  if (!sandbox) return undefined;
  const { permissions } = sandbox;
  if (permissions.type === 'disabled') return undefined;
  const projectRoots = (sandbox.workspaceRoots ?? []).map((uri, index) =>
    pathFromFileUri(uri, `sandbox.workspaceRoots[${index}]`),
  );
  if (permissions.type === 'external') {
    return {
      policy: { fileSystem: { kind: 'external-sandbox' }, network: permissions.network },
      projectRoots,
    };
  }
  const fs = permissions.file_system;
  if (fs.type === 'unrestricted') {
    return { policy: { fileSystem: { kind: 'unrestricted' }, network: permissions.network }, projectRoots };
  }
  const depth = fs.glob_scan_max_depth;
  return {
    policy: {
      fileSystem: {
        kind: 'restricted',
        entries: fs.entries.map(decodeEntry),
        ...(depth === undefined ? {} : { glob_scan_max_depth: Math.min(64, Math.max(1, depth)) }),
      },
      network: permissions.network,
    },
    projectRoots,
  };
}

function decodeEntry(entry: WireFileSystemEntry, index: number): FileSystemEntry {
  const where = `sandbox.permissions.file_system.entries[${index}]`;
  const access = entry.access === 'deny' || entry.access === 'none' ? 'none' : entry.access;
  let path: FileSystemPath;
  switch (entry.path.type) {
    case 'special': {
      const { kind, subpath } = entry.path.value;
      if (!(specialPathNames as readonly string[]).includes(kind)) {
        throw invalidWireValue(
          `${where}.path.value.kind`,
          `${where}: unknown special path kind ${JSON.stringify(kind)}; known kinds: ${specialPathNames.join(', ')}`,
        );
      }
      path = { type: 'special', value: kind as SpecialPathName, ...(subpath ? { subpath } : {}) };
      break;
    }
    case 'path':
      path = { type: 'path', path: pathFromFileUri(entry.path.path, `${where}.path`) };
      break;
    case 'glob_pattern':
      path = { type: 'glob', pattern: entry.path.pattern };
      break;
  }
  return { path, access };
}
