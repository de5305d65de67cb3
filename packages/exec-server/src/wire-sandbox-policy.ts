import {
  type EffectivePolicy,
  type FileSystemEntry,
  type FileSystemPath,
  type SandboxContext,
  type SpecialPathName,
  specialPathNames,
  type WireFileSystemEntry,
} from '@ux/protocol';
import { pathFromFileUri } from './file-uri.js';
import { invalidParams } from './rpc-error.js';

/** What a `sandbox` field asks for, in ux's policy terms. */
export interface WireSandboxRequest {
  policy: EffectivePolicy;
  /** What `project_roots` entries resolve to: the `workspaceRoots`, or nothing (as Codex does). */
  projectRoots: string[];
}

/**
 * Reads the wire `sandbox` of a `process/start` into an effective policy. `permissions: disabled`
 * (or no sandbox) asks for none and gives `undefined`. Anything it cannot express exactly (an unknown
 * special path) is a -32602 error: a sandbox is never applied more loosely than asked.
 */
export function policyFromWireSandbox(
  sandbox: SandboxContext | null | undefined,
): WireSandboxRequest | undefined {
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
        entries: fs.entries.map(entryFromWire),
        ...(depth === undefined ? {} : { glob_scan_max_depth: Math.min(64, Math.max(1, depth)) }),
      },
      network: permissions.network,
    },
    projectRoots,
  };
}

function entryFromWire(entry: WireFileSystemEntry, index: number): FileSystemEntry {
  const where = `sandbox.permissions.file_system.entries[${index}]`;
  const access = entry.access === 'deny' || entry.access === 'none' ? 'none' : entry.access;
  let path: FileSystemPath;
  switch (entry.path.type) {
    case 'special': {
      const { kind, subpath } = entry.path.value;
      if (!(specialPathNames as readonly string[]).includes(kind)) {
        throw invalidParams(
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
