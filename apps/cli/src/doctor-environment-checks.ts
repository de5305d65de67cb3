import type { RemoteEnvironmentConfig } from '@ux/config';
import { createExecServerSpawner } from '@ux/exec-server-client';
import { UX_EXEC_SERVER_CAPABILITIES } from '@ux/protocol/core';
import { connectEnvironment, describeEnvironment } from './cli-environments.js';
import type { CliSession } from './cli-session.js';
import type { DoctorCheck } from './doctor-command.js';
import type { Io } from './io.js';

/** How long doctor waits for one environment's handshake. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * One check per configured remote environment: reachable (the handshake), which server and version,
 * and whether it applies sandboxes when the sandbox mode needs one. An environment that cannot be
 * used fails when commands run there by default, else warns (other environments still work).
 */
export async function doctorEnvironmentChecks(session: CliSession, io: Io): Promise<DoctorCheck[]> {
  const { environments, defaultEnvironment } = session.settings;
  const remote = environments.filter(
    (environment): environment is RemoteEnvironmentConfig => environment.kind !== 'local',
  );
  const checks: DoctorCheck[] = [
    {
      name: 'environments',
      status: 'ok',
      detail: `${environments.map((environment) => environment.id).join(', ')}; commands run in ${defaultEnvironment} unless a call (environment_id) or --env says otherwise`,
    },
  ];
  const mode = session.settings.sandboxMode.value;
  const needsSandbox = mode === 'read-only' || mode === 'workspace-write';
  const results = await Promise.all(
    remote.map((config) => checkEnvironment(config, io, needsSandbox ? mode : undefined)),
  );
  for (const [index, result] of results.entries()) {
    const config = remote[index]!;
    const failing = result.status === 'fail' && config.id !== defaultEnvironment ? 'warn' : result.status;
    checks.push({ ...result, status: failing });
  }
  return checks;
}

async function checkEnvironment(
  config: RemoteEnvironmentConfig,
  io: Io,
  sandboxMode: string | undefined,
): Promise<DoctorCheck> {
  const name = `environment ${config.id}`;
  const where = `${config.definedAt.file}:${config.definedAt.line ?? 1}`;
  const spawner = createExecServerSpawner({
    name: `environment "${config.id}"`,
    connect: () => connectEnvironment(config, { env: io.env }),
    initializeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  });
  try {
    const client = await spawner.connection();
    const info = client.environmentInfo;
    const server = [
      `executor ${info.executorVersion}`,
      info.platformOs ? `on ${info.platformOs}` : undefined,
      info.shell ? `shell ${info.shell.path}` : undefined,
    ]
      .filter(Boolean)
      .join(', ');
    const sandboxes = client.can(UX_EXEC_SERVER_CAPABILITIES.sandboxedProcesses);
    if (sandboxMode && !sandboxes) {
      return {
        name,
        status: 'fail',
        detail: `reached through ${describeEnvironment(config)} (${server}), but the server does not apply sandboxes, and the sandbox mode ${sandboxMode} needs one: commands there are refused`,
        fix: `run \`ux doctor\` on that host and fix its sandbox (bubblewrap on Linux), or use danger-full-access for this environment's sessions`,
      };
    }
    return {
      name,
      status: 'ok',
      detail: `reached through ${describeEnvironment(config)}: ${server}; ${sandboxes ? 'it applies sandboxes' : 'it applies no sandbox (none is needed in this mode)'}`,
    };
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: `cannot be used: ${(error as Error).message}`,
      fix: fixFor(config, where),
    };
  } finally {
    await spawner.close();
  }
}

function fixFor(config: RemoteEnvironmentConfig, where: string): string {
  if (config.kind === 'command')
    return `check that \`${config.command.join(' ')}\` starts \`ux exec-server --listen stdio\` there (run it by hand: it should wait for input), or correct command at ${where}`;
  return `start \`ux exec-server --listen ws://IP:PORT --ws-token-file FILE\` on that host, check that ${config.url} is reachable from here${config.tokenEnv ? ` and that $${config.tokenEnv} holds the token of that file` : ''}, or correct url at ${where}`;
}
