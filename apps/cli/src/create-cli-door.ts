import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ResolvedReviewCommand, sandboxPolicyFor } from '@ux/config';
import { closeSandboxRegistry, localSpawnerForPlatform } from '@ux/door';
import {
  asksAboutHosts,
  createCommandPermissionHook,
  createCommandReviewer,
  createExecPolicy,
  createOrchestrator,
  createRuleFileAppender,
  listRuleFiles,
  loadRuleFiles,
  needsSandbox,
  type RuleWriter,
} from '@ux/orchestrator';
import {
  approvalPolicyName,
  type EffectivePolicy,
  type Reviewer,
  type SandboxPolicy,
} from '@ux/protocol/core';
import { ensureUxRuntimeRoot, type SandboxRegistry } from '@ux/protocol-utils';
import { createUnifiedExec, type UnifiedExec } from '@ux/unified-exec';
import { startEscalationBroker } from '@ux/zsh-fork';
import { applyPatchBin, applyPatchBinNeeds } from './apply-patch-bin.js';
import { loadBashParserOnBaseline } from './baseline-wasm-compiler.js';
import { createCliEnvironments } from './cli-environments.js';
import type { CliNetworkProxy } from './cli-network-proxy.js';
import { type CliSession, withNetworkProxy } from './cli-session.js';
import { credentialVariables, withCredentialsWithheld, withoutCredentials } from './credential-variables.js';
import { createCliSandboxRegistry } from './sandbox-backends.js';
import { withoutTestSwitches } from './without-test-switches.js';

export interface CliDoorOptions {
  /** The session directory (absolute). */
  cwd: string;
  /** Who answers approvals: the person at the terminal, or the MCP client. */
  reviewer: Reviewer;
  env: NodeJS.ProcessEnv;
  onWarning: (message: string) => void;
  /** Default: the backends configuration enables. */
  sandboxRegistry?: SandboxRegistry;
  /**
   * What sandboxed commands may do (`sessionPolicy`: deny-read, extra writable roots, network flags);
   * default the mode's policy with `[sandbox_workspace_write]`.
   */
  policy?: EffectivePolicy;
  /** Where the session runs (the proxy also listens on loopback TCP on darwin); default this process's. */
  platform?: NodeJS.Platform;
  /** What an environment's server says on stderr (its log), by environment id; default dropped. */
  onServerLog?: (id: string, text: string) => void;
  /**
   * Find the platform sandbox now, when commands run on this machine by default and the policy needs
   * one: a sandbox that cannot run (bwrap missing, a wrong `[sandbox.bwrap] path`) rejects the door with its
   * reason and fix, rather than failing the first command. `ux mcp` tells it in its `initialize` answer.
   */
  checkSandboxAtStart?: boolean;
  /**
   * The policy changed during the session: a host answered for the session (allowed, or refused), or
   * a command prefix approved (`prefix_rule`). `ux mcp` tells the model again.
   */
  onPolicyChange?: (
    change:
      | { kind: 'host'; host: string; decision: 'allowed' | 'refused' }
      | { kind: 'prefix'; prefix: readonly string[] },
  ) => void;
  /**
   * Whether the reviewer can put a question to anyone (false: an MCP client without elicitation):
   * a named denial suggests asking for escalation only when it can; a function is asked at each
   * result. Default true.
   */
  reviewerCanAsk?: boolean | (() => boolean);
}

/**
 * The door as the CLI wires it: the configured backends, the resolved approval policy and sandbox mode,
 * the rule files of `$UX_HOME/rules` plus `rules = […]`, approved prefixes saved to
 * `$UX_HOME/rules/default.rules`, and the local spawner.
 */
export async function createCliDoor(session: CliSession, options: CliDoorOptions): Promise<UnifiedExec> {
  const { settings } = session;
  const ruleFiles = [...(await listRuleFiles(session.rulesDirectory)), ...settings.rules];
  const rules = await loadRuleFiles(ruleFiles, { homeDir: options.env.HOME ?? homedir() });
  // A network by domain: the session's one proxy, started before anything can run and closed after
  // the door (whose shutdown ends every command that could still use it).
  let policy = options.policy ?? sandboxPolicyFor(settings.sandboxMode.value, settings);
  const proxy =
    'network' in policy && policy.network === 'proxied' && !policy.networkProxy
      ? // Loaded only here: the proxy's servers and resolver stay out of every other session's start-up.
        await (await import('./cli-network-proxy.js')).startCliNetworkProxy(
          // Under `never` nobody could answer: hosts outside the lists are simply not in them.
          asksAboutHosts(settings.approvalPolicy.value)
            ? settings.network
            : {
                ...settings.network,
                askUnknown: {
                  value: false,
                  source: `approval policy ${approvalPolicyName(settings.approvalPolicy.value)}`,
                },
              },
          {
            platform: options.platform ?? process.platform,
            env: options.env,
            onWarning: options.onWarning,
          },
        )
      : undefined;
  if (proxy && 'network' in policy) policy = withNetworkProxy(policy, proxy.endpoint);
  try {
    return await composeDoor(session, options, rules, policy, proxy);
  } catch (error) {
    await proxy?.close();
    throw error;
  }
}

async function composeDoor(
  session: CliSession,
  options: CliDoorOptions,
  rules: Awaited<ReturnType<typeof loadRuleFiles>>,
  policy: EffectivePolicy | SandboxPolicy,
  proxy: CliNetworkProxy | undefined,
): Promise<UnifiedExec> {
  const { settings } = session;
  const credentials = credentialVariables(settings.environments);
  // First: on Windows it rejects when job objects cannot be loaded (the caller then closes the proxy).
  const spawner = await localSpawnerForPlatform({ platform: options.platform ?? process.platform });
  // Remote environments connect on their first command; their sandboxes are applied by their servers.
  const environments = createCliEnvironments(settings.environments, {
    env: options.env,
    cwd: options.cwd,
    ...(options.onServerLog ? { onServerLog: options.onServerLog } : {}),
  });
  // The session's backends: closed with the door (the bwrap backend's guard, runtime files and private
  // /tmp go then), unless the caller handed its own registry and owns its life.
  const ownRegistry = options.sandboxRegistry
    ? undefined
    : createCliSandboxRegistry(session.sandboxPlugins, settings.enabledBackends?.value, session.sandboxHost);
  const orchestrator = createOrchestrator({
    environmentSandboxes: environments.sandboxes,
    sandboxRegistry: options.sandboxRegistry ?? ownRegistry!,
    enabledBackends: settings.enabledBackends?.value,
    allowedBackends: settings.allowedBackends,
    approvalPolicy: settings.approvalPolicy.value,
    policy,
    execPolicy: createExecPolicy(rules),
    ruleWriter: withPrefixReport(
      createRuleFileAppender(join(session.rulesDirectory, 'default.rules')),
      options.onPolicyChange,
    ),
    // The reviewer chain: hooks (the requirements' first), then the `[auto_review]` command when
    // approvals_reviewer routes there (on-request and granular only), else the person. With
    // `[auto_review] strict = true`, every command and retry goes to that command, hooks skipped.
    permissionHooks: session.review.hooks.map((hook) =>
      createCommandPermissionHook({
        command: hook.command,
        timeoutMs: hook.timeoutMs,
        ...(hook.name === undefined ? {} : { id: hook.name }),
      }),
    ),
    ...((session.review.approvalsReviewer.value === 'auto_review' || session.review.strict.value) &&
    session.review.autoReview
      ? { autoReviewer: commandReviewer(session.review.autoReview) }
      : {}),
    strictAutoReview: session.review.strict.value,
    loadBashParser: loadBashParserOnBaseline,
    reviewer: options.reviewer,
    onWarning: options.onWarning,
  });
  if (
    options.checkSandboxAtStart &&
    runsLocallyByDefault(session) &&
    'fileSystem' in policy &&
    needsSandbox(policy)
  ) {
    try {
      await orchestrator.sandboxes.select();
    } catch (error) {
      await closeSandboxRegistry(ownRegistry);
      throw error;
    }
  }
  // The zsh fork's execs are decided one by one through a broker that lives as long as the door.
  const { shell } = session.toolPlan;
  const broker =
    shell.kind === 'zsh-fork'
      ? await startEscalationBroker({
          runtimeDir: runtimeDirectory(),
          wrapperPath: shell.execveWrapperPath,
          onDiagnostic: (message) => options.onWarning(`zsh fork: ${message}`),
        })
      : undefined;
  const door = createUnifiedExec({
    orchestrator,
    spawner,
    toolPlan: session.toolPlan,
    environments: environments.door,
    defaultEnvironment: settings.defaultEnvironment,
    localEnvironment: settings.environments.some((environment) => environment.kind === 'local'),
    cwd: options.cwd,
    userShell: session.userShell,
    allowLoginShell: session.configuration.user?.allowLoginShell,
    earlyExitWindowMs: session.configuration.user?.earlyExitWindowMs,
    // ux's credentials (every `token_env`) reach no command, snapshot, remote server or escalated
    // program, whatever the policy says.
    shellEnvironmentPolicy: withCredentialsWithheld(settings.environment, credentials),
    baseEnv: withoutCredentials(withoutTestSwitches(options.env), credentials),
    prependPath: applyPatchBin(join(dirname(session.rulesDirectory), 'bin')),
    helperPaths: applyPatchBinNeeds(),
    onWarning: options.onWarning,
    ...(options.reviewerCanAsk === undefined ? {} : { reviewerCanAsk: options.reviewerCanAsk }),
    ...(broker ? { escalationBroker: broker } : {}),
    // Snapshots hold the login environment: under $UX_HOME (0700), each removed when its session ends.
    shellSnapshotDir: join(dirname(session.rulesDirectory), 'shell-snapshots'),
  });
  // Hosts outside the lists are the reviewer chain's to decide, with the session's directory; every
  // exchange reaches the door's listeners as a `network_access` event.
  proxy?.setAsk(async (request, { signal }) => {
    const decision = await orchestrator.decideNetwork({ ...request, cwd: options.cwd, signal });
    if (decision === 'allow_session' || decision === 'deny_session')
      options.onPolicyChange?.({
        kind: 'host',
        host: request.host,
        decision: decision === 'allow_session' ? 'allowed' : 'refused',
      });
    return decision;
  });
  const unsubscribe = proxy?.onAccess((event) => door.notify(event));
  return {
    ...door,
    async shutdown() {
      try {
        await door.shutdown();
        await environments.close();
        await broker?.close();
        await closeSandboxRegistry(ownRegistry);
      } finally {
        unsubscribe?.();
        await proxy?.close();
      }
    },
  };
}

/** Calls without `environment_id` run on this machine. */
function runsLocallyByDefault(session: CliSession): boolean {
  const { settings } = session;
  return settings.environments.some(
    (environment) => environment.id === settings.defaultEnvironment && environment.kind === 'local',
  );
}

/** The rule writer, telling `onPolicyChange` of each prefix (it applies for the session even if saving fails). */
function withPrefixReport(write: RuleWriter, onPolicyChange: CliDoorOptions['onPolicyChange']): RuleWriter {
  if (!onPolicyChange) return write;
  return (prefix) => {
    onPolicyChange({ kind: 'prefix', prefix });
    return write(prefix);
  };
}

function commandReviewer(config: ResolvedReviewCommand): Reviewer {
  return createCommandReviewer({
    command: config.command,
    timeoutMs: config.timeoutMs,
    ...(config.name === undefined ? {} : { id: config.name }),
  });
}

/**
 * Where the broker's socket directory goes: ux's per-user runtime directory, which every sandbox of
 * every ux process hides (docs/threat-model.md).
 */
function runtimeDirectory(): string {
  return ensureUxRuntimeRoot();
}
