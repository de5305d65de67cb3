import { dirname, join } from 'node:path';
import {
  ExecServerArgsError,
  parseExecServerArgs,
  type RunExecServerDependencies,
  runExecServer,
} from '@ux/exec-server';
import { applyPatchBin } from './apply-patch-bin.js';
import { loadCliSession } from './cli-session.js';
import type { Io } from './io.js';
import { BACKEND_IDS, createCliSandboxRegistry } from './sandbox-backends.js';
import { UsageError } from './usage-error.js';

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
  try {
    const parsed = parseExecServerArgs(args);
    const session = loadCliSession(io);
    const { settings } = session;
    // Without --sandbox-backends, the backends are those the config enables and the requirements allow.
    if (!parsed.sandboxBackends) {
      const enabled = settings.enabledBackends?.value ?? BACKEND_IDS;
      const allowed = settings.allowedBackends;
      if (settings.enabledBackends || allowed)
        parsed.sandboxBackends = enabled.filter((id) => !allowed || allowed.includes(id));
    } else {
      const barred = parsed.sandboxBackends.filter(
        (id) => settings.allowedBackends && !settings.allowedBackends.includes(id),
      );
      if (barred.length > 0)
        throw new UsageError(
          `--sandbox-backends: ${barred.join(', ')} not allowed by the requirements (allowed_sandbox_backends = [${settings.allowedBackends!.join(', ')}])`,
          'ux exec-server --help',
        );
    }
    const sandboxRegistry = (enabled?: readonly string[]) =>
      createCliSandboxRegistry(enabled, session.backendOptions);
    // Its commands find `apply_patch` as local ones do: clients put this directory first on PATH.
    const helpers = applyPatchBin(join(dirname(session.rulesDirectory), 'bin'));
    return await runExecServer(parsed, io, { sandboxRegistry, prependPathDirs: helpers, ...deps });
  } catch (error) {
    if (error instanceof ExecServerArgsError) throw new UsageError(error.message, 'ux exec-server --help');
    throw error;
  }
}
