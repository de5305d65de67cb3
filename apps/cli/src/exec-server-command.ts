import { dirname, join } from 'node:path';
import type { Requirements } from '@ux/config';
import { type ExecServer, type RunExecServerDependencies, runExecServer } from '@ux/exec-server';
import { ConfigError, UnknownPluginError } from '@ux/protocol/core';
import { checkSandboxBackendIds } from '@ux/protocol-utils';
import { applyPatchBin, applyPatchBinNeeds } from './apply-patch-bin.js';
import { loadCliSession } from './cli-session.js';
import { loadConfiguration } from './config-files.js';
import { credentialVariables, withoutCredentials } from './credential-variables.js';
import { EXEC_SERVER_HELP, parseExecServerArgs } from './exec-server-args.js';
import type { Io } from './io.js';
import { createCliSandboxRegistry } from './sandbox-backends.js';
import { serveHostedProcesses } from './serve-hosted-processes.js';
import { policyProtector, sessionHostState } from './session-protection.js';
import { startProcessControl } from './start-process-control.js';
import { UsageError } from './usage-error.js';

const HELP_COMMAND = 'ux exec-server --help';

/**
 * `ux exec-server --listen stdio | ws://IP:PORT …`: a process host speaking Codex's exec-server
 * protocol, with the CLI's sandbox backends for `sandbox` requests. Runs until stdin closes (stdio),
 * SIGINT or SIGTERM, then kills every process it started and returns 0. `deps` is for tests.
 */
export async function execServerCommand(
  args: string[],
  io: Io,
  deps: Partial<RunExecServerDependencies> = {},
): Promise<number> {
  const parsed = parseExecServerArgs(args);
  if (parsed.help) {
    io.stdout(EXEC_SERVER_HELP);
    return 0;
  }
  refuseWhereLocalIsForbidden(loadConfiguration(io.env).requirements);
  const session = loadCliSession(io);
  const { settings } = session;
  // The order of preference: --sandbox-backends, else the config's sandbox_backends, else every
  // backend in the CLI's order; the requirements' allow-list applies to both (selectSandboxBackend).
  const allowed = settings.allowedBackends;
  const barred = (parsed.sandboxBackends ?? []).filter((id) => allowed && !allowed.includes(id));
  if (barred.length > 0)
    throw new UsageError(
      `--sandbox-backends: ${barred.join(', ')} not allowed by the requirements (allowed_sandbox_backends = [${allowed!.join(', ')}])`,
      HELP_COMMAND,
    );
  const preference = parsed.sandboxBackends ?? settings.enabledBackends?.value;
  const sandboxRegistry = () =>
    createCliSandboxRegistry(session.sandboxPlugins, undefined, session.sandboxHost);
  // The one "unknown backend id" check, as a usage error of this command.
  try {
    checkSandboxBackendIds(parsed.sandboxBackends ?? [], sandboxRegistry().ids);
  } catch (error) {
    if (UnknownPluginError.isInstance(error)) throw new UsageError(error.message, HELP_COMMAND);
    throw error;
  }
  // Its commands find `apply_patch` as local ones do: clients put this directory first on PATH.
  const helpers = applyPatchBin(join(dirname(session.rulesDirectory), 'bin'));
  const { help: _help, ...parsedSettings } = parsed;
  const serverSettings = {
    ...parsedSettings,
    ...(preference ? { sandboxBackends: preference } : {}),
    ...(allowed ? { allowedSandboxBackends: allowed } : {}),
  };
  // `ux ps`, `ux attach` and `ux kill` reach its hosted processes through its control socket.
  const control = await startProcessControl('exec-server', process.cwd(), (message) =>
    io.stderr(`ux exec-server: warning: ${message}\n`),
  );
  let served: ExecServer | undefined;
  if (control) serveHostedProcesses(control, () => served);
  try {
    return await runExecServer(
      serverSettings,
      // Its commands start from its variables: never the tokens this host's ux reads (`token_env`).
      { ...io, env: withoutCredentials(io.env, credentialVariables(settings.environments)) },
      {
        sandboxRegistry,
        prependPathDirs: helpers,
        helperPaths: helpers.length > 0 ? applyPatchBinNeeds() : [],
        // Every sandbox it applies keeps this host's ux state out of reach: the runtime roots (its
        // snapshots, other ux processes' files) hidden, UX_HOME and the requirements read-only.
        hostState: sessionHostState(session, io.env),
        // A private /tmp (config `private_tmp`, default on) and the repositories in each request's
        // writable roots, protected like the workspace's own.
        protectPolicy: policyProtector(session, io.env),
        ...deps,
        onServer: (server) => {
          served = server;
          deps.onServer?.(server);
        },
      },
    );
  } finally {
    await control?.close();
  }
}

/**
 * The server runs commands on this machine. Where the requirements forbid local commands
 * (`allowed_environments` without "local"), a server here would be a way around them: refused.
 */
function refuseWhereLocalIsForbidden(requirements: Requirements | undefined): void {
  const allowed = requirements?.allowedEnvironments;
  if (!allowed || allowed.values.includes('local')) return;
  throw new ConfigError({
    ...allowed.location,
    reason: `allowed_environments = [${allowed.values.map((id) => `"${id}"`).join(', ')}] forbids commands on this machine, and ux exec-server would run them here; run the server on a host whose requirements allow "local"`,
  });
}
