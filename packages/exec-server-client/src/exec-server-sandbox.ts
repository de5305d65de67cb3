import {
  InvalidArgumentsError,
  type LaunchPlan,
  MissingCommandLineError,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxContext,
  type SandboxPlanRequest,
  type SandboxProbe,
  UX_EXEC_SERVER_CAPABILITIES,
} from '@ux/protocol/core';
import { encodeSandboxContext } from '@ux/protocol-utils';
import type { ExecServerSpawner, ExecServerSpawnRequest } from './exec-server-spawner.js';

/**
 * argv[0] of a plan made by the exec-server sandbox. It holds a NUL byte, which no operating system
 * can execute: should such a plan ever reach a local spawner, it is refused there (fail closed) instead
 * of running unconfined.
 */
export const EXEC_SERVER_SANDBOX_LAUNCHER = 'ux-exec-server-sandbox\u0000';

/**
 * The sandbox of a remote environment, as a backend the orchestrator can choose: it does not wrap the
 * command here; its plan carries the policy to the exec-server spawner, which sends it as the wire
 * `sandbox` of `process/start` so the server applies its own platform sandbox. Its probe passes only
 * when the server advertises that it applies sandboxes (ux's `uxSandboxedProcesses`), and a start the
 * server answers with `sandboxType: "none"` is killed and refused.
 */
export function createExecServerSandbox(spawner: ExecServerSpawner): SandboxBackend {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'exec-server',
    // The remote host's platform decides; the sandbox runs there, not here.
    platforms: ['linux', 'darwin', 'win32', 'freebsd', 'openbsd', 'sunos', 'aix'],
    async probe(): Promise<SandboxProbe> {
      let client: Awaited<ReturnType<ExecServerSpawner['connection']>>;
      try {
        client = await spawner.connection();
      } catch (error) {
        return {
          available: false,
          reason: (error as Error).message,
          fix: 'check that the remote environment is reachable and runs `ux exec-server`',
        };
      }
      if (client.can(UX_EXEC_SERVER_CAPABILITIES.sandboxedProcesses)) return { available: true };
      return {
        available: false,
        reason: `the exec-server (executor ${client.environmentInfo.executorVersion}) does not advertise that it applies sandboxes`,
        fix: 'run `ux exec-server` on a remote host where a sandbox backend works (bubblewrap on Linux), or choose a policy without a sandbox',
      };
    },
    async plan(request: SandboxPlanRequest): Promise<LaunchPlan> {
      if (request.argv.length === 0) throw new MissingCommandLineError();
      const context = encodeSandboxContext(request);
      return {
        argv: [EXEC_SERVER_SANDBOX_LAUNCHER, JSON.stringify(context), ...request.argv],
        cwd: request.cwd,
        env: { ...request.env },
        sandboxType: 'exec-server',
        enforcement: {
          fileSystem: 'enforced',
          network: 'enforced',
          notes: [
            'applied by the exec-server host with its own platform sandbox; a server that applies none is refused',
          ],
        },
      };
    },
  };
}

/** Splits a plan of the exec-server sandbox back into the command and its wire `sandbox`. */
export function takeSandboxRequest(request: ExecServerSpawnRequest): {
  argv: readonly string[];
  sandbox?: SandboxContext;
} {
  if (request.argv[0] !== EXEC_SERVER_SANDBOX_LAUNCHER) {
    return { argv: request.argv, ...(request.sandbox ? { sandbox: request.sandbox } : {}) };
  }
  const context = safeJson(request.argv[1]);
  if (!looksLikeSandboxContext(context)) {
    throw new InvalidArgumentsError({
      tool: 'exec-server sandbox',
      issues: [{ path: 'argv[1]', message: 'is not the sandbox context of an exec-server sandbox plan' }],
    });
  }
  return { argv: request.argv.slice(2), sandbox: context };
}

/** The outline of a wire sandbox context; the spawner checks it against the schema before sending. */
function looksLikeSandboxContext(value: unknown): value is SandboxContext {
  if (typeof value !== 'object' || value === null) return false;
  const { permissions, windowsSandboxLevel } = value as Record<string, unknown>;
  return (
    typeof permissions === 'object' &&
    permissions !== null &&
    typeof (permissions as Record<string, unknown>).type === 'string' &&
    typeof windowsSandboxLevel === 'string'
  );
}

function safeJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}
