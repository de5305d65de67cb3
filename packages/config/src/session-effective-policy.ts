import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import {
  ConfigError,
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type FileSystemEntry,
  type SandboxMode,
  type SandboxPolicy,
  UxError,
} from '@ux/protocol/core';
import { GLOB_CHARACTERS } from './deny-read-entries.js';
import type { DenyReadEntry, SessionResolution } from './resolve-session-settings.js';

/** The classic sandbox policy for a mode and the `[sandbox_workspace_write]` settings. */
export function sandboxPolicyFor(mode: SandboxMode, settings: SessionResolution): SandboxPolicy {
  switch (mode) {
    case 'read-only':
      return { type: 'read-only', network_access: false };
    case 'workspace-write':
      return {
        type: 'workspace-write',
        writable_roots: settings.workspaceWrite.writableRoots,
        network_access: settings.workspaceWrite.networkAccess,
        exclude_tmpdir_env_var: settings.workspaceWrite.excludeTmpdirEnvVar,
        exclude_slash_tmp: settings.workspaceWrite.excludeSlashTmp,
      };
    case 'danger-full-access':
      return { type: 'danger-full-access' };
    case 'external-sandbox':
      return { type: 'external-sandbox', network_access: 'restricted' };
  }
}

const NETWORK_POLICY = { off: 'restricted', on: 'enabled', domains: 'proxied' } as const;

/**
 * What sandboxed commands of a session may do, from its resolved settings (`resolveSessionSettings`): the mode's policy (with `[sandbox_workspace_write]` and writable roots), every
 * deny-read entry, the resolved network (`off` → `restricted`, `on` → `enabled`, by domain → `proxied`,
 * whose `networkProxy` the host adds when it starts its proxy) and the unix sockets allowed. Deny-read
 * entries are made absolute here, once: `~` and `~/…` are the home directory, anything relative is
 * relative to the session directory `cwd` (a glob too), so a command run elsewhere is denied the same
 * files. Refused, because neither could be enforced: a deny-read entry, or a network or socket choice of
 * the command line (`flagged`: `--no-network`, `--allow-domain H`, …), with a mode that runs without a
 * sandbox; a network by domain or a unix socket list when commands run in a remote environment by
 * default (the door refuses those too: `remoteEnvironmentPolicyProblem` of `@ux/unified-exec`). The
 * same decisions for `ux` and for any embedder.
 */
export function sessionEffectivePolicy(
  settings: SessionResolution,
  place: { cwd: string; homeDir?: string; flagged?: readonly string[] },
): EffectivePolicy {
  const mode = settings.sandboxMode;
  const policy = effectivePolicyFromSandboxPolicy(sandboxPolicyFor(mode.value, settings));
  if (policy.fileSystem.kind !== 'restricted') {
    const unsandboxed = `sandbox mode ${mode.value} (from ${mode.source}) runs commands without a ux sandbox`;
    const [entry] = settings.denyRead;
    if (entry?.location)
      throw new ConfigError({
        ...entry.location,
        reason: `deny_read needs a sandbox to hide "${entry.pattern}", but ${unsandboxed}; choose read-only or workspace-write, or clear the list for this run with -c deny_read=[]`,
      });
    if (entry) throw new UxError('invalid_arguments', `${entry.source} needs a sandbox, but ${unsandboxed}`);
    const [flag] = place.flagged ?? [];
    if (flag) throw new UxError('invalid_arguments', `${flag} needs a sandbox, but ${unsandboxed}`);
    return policy;
  }
  refuseRemoteNetwork(settings);
  const homeDir = place.homeDir ?? homedir();
  const sockets = settings.allowUnixSockets.map((entry) => entry.path);
  return {
    fileSystem: {
      ...policy.fileSystem,
      entries: [
        ...policy.fileSystem.entries,
        ...settings.denyRead.map((entry) => denyReadEntry(entry, place.cwd, homeDir)),
      ],
    },
    network: NETWORK_POLICY[settings.network.mode],
    ...(sockets.length > 0 ? { allowUnixSockets: sockets } : {}),
  };
}

/**
 * What a remote default environment cannot apply (as `remoteEnvironmentPolicyProblem` of
 * `@ux/unified-exec`, which the door checks for any policy), with the file and line that chose it.
 */
function refuseRemoteNetwork(settings: SessionResolution): void {
  const id = settings.defaultEnvironment;
  const remote = settings.environments.find(
    (environment) => environment.id === id && environment.kind !== 'local',
  );
  if (!remote || id === undefined) return;
  const where = `commands run in the remote environment "${id}" (default_environment or --env), and an exec-server`;
  const { network } = settings;
  if (network.mode === 'domains') {
    const reason = `network by domain (from ${network.source}) cannot be used there: ${where} cannot reach this machine's allow-list proxy; give that environment the network on or off (--network / --no-network)`;
    if (!network.location) throw new UxError('invalid_arguments', reason);
    throw new ConfigError({ ...network.location, reason });
  }
  const [socket] = settings.allowUnixSockets;
  if (socket) {
    const reason = `allow_unix_sockets entry "${socket.path}" (from ${socket.source}) cannot be used there: ${where} cannot be told which unix sockets to allow`;
    if (!socket.location) throw new UxError('invalid_arguments', reason);
    throw new ConfigError({ ...socket.location, reason });
  }
}

function denyReadEntry(entry: DenyReadEntry, cwd: string, homeDir: string): FileSystemEntry {
  const { pattern } = entry;
  const expanded =
    pattern === '~' ? homeDir : pattern.startsWith('~/') ? join(homeDir, pattern.slice(2)) : pattern;
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
  return GLOB_CHARACTERS.test(pattern)
    ? { path: { type: 'glob', pattern: absolute }, access: 'none' }
    : { path: { type: 'path', path: absolute }, access: 'none' };
}
