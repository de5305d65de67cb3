import type { EnvironmentConfig, RemoteEnvironmentConfig } from '@ux/config';
import {
  connectWebSocketExecServer,
  createExecServerSandbox,
  createExecServerSpawner,
  type ExecServerSpawner,
  type ExecServerTransport,
  spawnStdioExecServer,
} from '@ux/exec-server-client';
import type { SandboxBackend } from '@ux/protocol/core';
import type { DoorEnvironment } from '@ux/unified-exec';
import { credentialVariables, withoutCredentials } from './credential-variables.js';

/**
 * How long a dropped WebSocket is retried, resuming its session, before the environment's live
 * sessions are reported lost: long enough for a network blip or a proxy restart, short enough that a
 * server that died is reported while someone still waits.
 */
export const WEBSOCKET_RESUME_WINDOW_MS = 10_000;

/** The configured remote environments, connected lazily (on their first command). */
export interface CliEnvironments {
  /** For the door, by id. */
  door: Record<string, DoorEnvironment>;
  /** For the orchestrator: each environment's sandbox (applied by its server). */
  sandboxes: Record<string, SandboxBackend>;
  spawners: Record<string, ExecServerSpawner>;
  /** Closes every connection (a stdio server stops, and with it what it hosts). */
  close(): Promise<void>;
}

/** Spawners and sandboxes for `[environments.NAME]`; nothing connects until a command needs it. */
export function createCliEnvironments(
  configs: readonly EnvironmentConfig[],
  options: { env: NodeJS.ProcessEnv; cwd: string; onServerLog?: (id: string, text: string) => void },
): CliEnvironments {
  const result: CliEnvironments = {
    door: {},
    sandboxes: {},
    spawners: {},
    async close() {
      await Promise.all(Object.values(result.spawners).map((spawner) => spawner.close()));
    },
  };
  for (const config of configs) {
    if (config.kind === 'local') continue;
    const spawner = createExecServerSpawner({
      name: `environment "${config.id}"`,
      connect: () => connectEnvironment(config, { ...options, configs }),
      // A WebSocket can be reopened and its session resumed; a stdio server ends with its pipe.
      ...(config.kind === 'websocket' ? { resumeWindowMs: WEBSOCKET_RESUME_WINDOW_MS } : {}),
    });
    result.spawners[config.id] = spawner;
    result.sandboxes[config.id] = createExecServerSandbox(spawner);
    result.door[config.id] = { spawner, cwd: config.cwd ?? options.cwd };
  }
  return result;
}

/** Opens the transport of one environment: its WebSocket (with the token) or its stdio command. */
export function connectEnvironment(
  config: RemoteEnvironmentConfig,
  options: {
    env: NodeJS.ProcessEnv;
    onServerLog?: (id: string, text: string) => void;
    /** Every configured environment: their tokens' variables are kept from a stdio server. */
    configs?: readonly EnvironmentConfig[];
  },
): Promise<ExecServerTransport> {
  if (config.kind === 'command') {
    const [command, ...args] = config.command;
    return spawnStdioExecServer({
      command: command!,
      args,
      // The server's commands start from its variables: never ux's tokens (`credentialVariables`).
      env: withoutCredentials(options.env, credentialVariables(options.configs ?? [])),
      ...(options.onServerLog ? { onStderr: (text) => options.onServerLog!(config.id, text) } : {}),
    });
  }
  let token: string | undefined;
  if (config.tokenEnv !== undefined) {
    token = options.env[config.tokenEnv]?.trim();
    if (!token) {
      const where = `${config.definedAt.file}:${config.definedAt.line ?? 1}`;
      return Promise.reject(
        new Error(
          `its token is read from $${config.tokenEnv} (token_env at ${where}), which is not set; export ${config.tokenEnv}=<the server's token>`,
        ),
      );
    }
  }
  return connectWebSocketExecServer({ url: config.url, ...(token ? { token } : {}) });
}

/** One line saying how an environment is reached, for messages and `ux doctor`. */
export function describeEnvironment(config: RemoteEnvironmentConfig): string {
  return config.kind === 'command'
    ? `the command \`${config.command.join(' ')}\``
    : `${config.url}${config.tokenEnv ? ` with the token in $${config.tokenEnv}` : ' without a token'}`;
}
