import { isAbsolute, posix, resolve } from 'node:path';
import type { ShellMode } from '@ux/features';
import type { EnvPolicy, ExecProcess, SpawnRequest } from '@ux/protocol/core';
import type { DoorContext, ProcessStarter } from './door-context.js';

/** A start request for a remote environment: what an exec-server spawner accepts beyond the basics. */
export interface RemoteSpawnRequest extends SpawnRequest {
  /** The server builds the command's variables from its own with this policy; `env` goes on top. */
  envPolicy?: EnvPolicy;
  /** The server runs a `[shell, -lc, script]` command from its own snapshot of that shell. */
  shellSnapshot?: { scopeId: string; shell: { name: string; path: string } };
}

/** Starts a remote environment's processes: `createExecServerSpawner` of `@ux/exec-server-client`. */
export interface RemoteStarter {
  spawn(request: RemoteSpawnRequest): Promise<ExecProcess>;
}

/**
 * A remote environment commands can run in: an exec-server (ux's or Codex's) reached over WebSocket
 * or a stdio command (ssh, docker exec -i, kubectl exec -i). Its sandbox is the orchestrator's
 * business (`environments` of its settings, under the same id).
 */
export interface DoorEnvironment {
  spawner: RemoteStarter;
  /** The working directory there (absolute); default the session's cwd. */
  cwd?: string;
  /** The shell commands run in there; default `/bin/bash`. */
  shell?: string;
  /** The server's variables a command keeps (sent as `envPolicy`); default the door's policy. */
  envPolicy?: EnvPolicy;
}

/** Where one call runs, resolved. */
export type ResolvedEnvironment =
  | { id: 'local'; remote: false; cwd: string; spawner: ProcessStarter }
  | {
      id: string;
      remote: true;
      cwd: string;
      shell: string;
      spawner: RemoteStarter;
      envPolicy: EnvPolicy | undefined;
    };

/** The environment a call names, or the session's default (docs/reference/door.md §3). */
export function resolveEnvironment(
  door: DoorContext,
  requested: string | undefined,
): { ok: true; environment: ResolvedEnvironment } | { ok: false; message: string } {
  const id = requested ?? door.defaultEnvironment;
  if (id === undefined) return { ok: false, message: 'unified exec is unavailable in this session' };
  if (id === 'local') {
    if (!door.localEnvironment) {
      return {
        ok: false,
        message: `environment_id "local" is not available in this session (commands may not run on this machine); known environments: ${knownIds(door)}`,
      };
    }
    return { ok: true, environment: { id: 'local', remote: false, cwd: door.cwd, spawner: door.spawner } };
  }
  const remote = door.environments.get(id);
  if (!remote) {
    return { ok: false, message: `unknown environment_id "${id}"; known environments: ${knownIds(door)}` };
  }
  return {
    ok: true,
    environment: {
      id,
      remote: true,
      cwd: remote.cwd ?? door.cwd,
      shell: remote.shell ?? '/bin/bash',
      spawner: remote.spawner,
      envPolicy: remote.envPolicy,
    },
  };
}

/** The call's working directory in its environment: its cwd, or `workdir` resolved against it. */
export function workdirIn(environment: ResolvedEnvironment, workdir: string | undefined): string {
  if (!workdir) return environment.cwd;
  if (!environment.remote) return isAbsolute(workdir) ? workdir : resolve(environment.cwd, workdir);
  // A remote host's paths are POSIX whatever this machine is.
  return posix.isAbsolute(workdir) ? posix.normalize(workdir) : posix.resolve(environment.cwd, workdir);
}

function knownIds(door: DoorContext): string {
  return [...(door.localEnvironment ? ['local'] : []), ...door.environments.keys()].join(', ') || '(none)';
}

/**
 * The shell settings of `resolveArgv` for a call: remote environments always run direct
 * (docs/reference/door.md §3).
 */
export function shellFor(
  door: DoorContext,
  environment: ResolvedEnvironment,
): { userShell: string; allowLoginShell: boolean; shellMode: ShellMode } {
  if (environment.remote)
    return {
      userShell: environment.shell,
      allowLoginShell: door.allowLoginShell,
      shellMode: { kind: 'direct' },
    };
  return { userShell: door.userShell, allowLoginShell: door.allowLoginShell, shellMode: door.shellMode };
}
