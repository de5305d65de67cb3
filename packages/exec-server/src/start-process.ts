import {
  type ExecParams,
  type ExecProcess,
  InvalidArgumentsError,
  type LaunchPlan,
  MissingCommandLineError,
  type SandboxBackend,
  SandboxUnavailableError,
  type Spawner,
  SpawnFailedError,
  UxError,
} from '@ux/protocol';
import { envFromPolicy } from './env-from-policy.js';
import { pathFromFileUri } from './file-uri.js';
import { internalError, invalidParams } from './rpc-error.js';
import { type SandboxChoice, wireSandboxType } from './sandbox-selection.js';
import { policyFromWireSandbox } from './wire-sandbox-policy.js';

export interface StartDependencies {
  spawner: Spawner;
  selectSandbox: () => Promise<SandboxChoice>;
  /** The server's own environment, filtered by an `envPolicy`. */
  serverEnv: Readonly<Record<string, string | undefined>>;
}

export interface StartedProcess {
  process: ExecProcess;
  sandbox?: { backend: SandboxBackend; plan: LaunchPlan };
  /** What the start result reports: `none`, or the wire name of the sandbox applied. */
  sandboxType: string;
}

/**
 * Turns validated `process/start` params into a running process: the `file://` cwd, the environment
 * (exact, or built by `envPolicy`), the sandbox (applied by this platform's backend, or a refusal that
 * says how to fix it; never a silent unsandboxed run) and the spawn. Nothing is spawned on bad input.
 */
export async function startProcess(deps: StartDependencies, params: ExecParams): Promise<StartedProcess> {
  const cwd = pathFromFileUri(params.cwd, 'cwd');
  refuseUnsupported(params);
  const env = envFromPolicy(deps.serverEnv, params.envPolicy, params.env);
  const wanted = policyFromWireSandbox(params.sandbox);
  const stdin = params.pipeStdin ? 'pipe' : 'closed';
  const arg0 = params.arg0 ?? undefined;

  if (!wanted) {
    const process = await spawn(deps.spawner, params.argv, {
      argv: params.argv,
      cwd,
      env,
      tty: params.tty,
      stdin,
      ...(arg0 === undefined ? {} : { arg0 }),
    });
    return { process, sandboxType: 'none' };
  }

  if (arg0 !== undefined) {
    throw invalidParams(
      'arg0 cannot be combined with a sandbox: the sandbox launcher starts the program itself',
    );
  }
  const choice = await deps.selectSandbox();
  if (!choice.available) {
    throw internalError(
      `sandbox requested but none can be applied here: ${choice.reason}; fix: ${choice.fix}. The command was not run.`,
    );
  }
  let plan: LaunchPlan;
  try {
    plan = await choice.backend.plan({
      argv: params.argv,
      cwd,
      env,
      policy: wanted.policy,
      projectRoots: wanted.projectRoots,
      tty: params.tty,
    });
  } catch (error) {
    if (InvalidArgumentsError.isInstance(error)) throw invalidParams(`sandbox: ${error.message}`);
    if (SandboxUnavailableError.isInstance(error))
      throw internalError(`${error.message}. The command was not run.`);
    throw error;
  }
  try {
    const process = await spawn(deps.spawner, params.argv, {
      argv: plan.argv,
      cwd: plan.cwd,
      env: plan.env,
      tty: params.tty,
      stdin,
    });
    return {
      process,
      sandbox: { backend: choice.backend, plan },
      sandboxType: wireSandboxType(choice.backend.id),
    };
  } catch (error) {
    await plan.cleanup?.();
    throw error;
  }
}

/** Requests this server cannot honour exactly are refused rather than run differently. */
function refuseUnsupported(params: ExecParams): void {
  if (params.shellSnapshot) {
    throw invalidParams(
      'shellSnapshot is not supported by this exec-server (it does not advertise shellSnapshotV2)',
    );
  }
  if (params.enforceManagedNetwork || (params.networkProxy !== undefined && params.networkProxy !== null)) {
    throw invalidParams(
      'managed network (enforceManagedNetwork, networkProxy) is not supported by this exec-server',
    );
  }
}

async function spawn(
  spawner: Spawner,
  argv: readonly string[],
  request: Parameters<Spawner['spawn']>[0],
): Promise<ExecProcess> {
  try {
    return await spawner.spawn(request);
  } catch (error) {
    if (MissingCommandLineError.isInstance(error) || InvalidArgumentsError.isInstance(error)) {
      throw invalidParams(error.message);
    }
    if (SpawnFailedError.isInstance(error) || UxError.isInstance(error)) throw internalError(error.message);
    throw internalError(`failed to start ${argv[0]}: ${(error as Error).message}`);
  }
}
