import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  createExecPolicy,
  createOrchestrator,
  createRuleFileAppender,
  listRuleFiles,
  loadRuleFiles,
} from '@ux/orchestrator';
import type { EffectivePolicy, Reviewer, SandboxRegistry } from '@ux/protocol/core';
import { createLocalSpawner } from '@ux/spawn';
import { createUnifiedExec, type UnifiedExec } from '@ux/unified-exec';
import { startEscalationBroker } from '@ux/zsh-fork';
import { type CliSession, sandboxPolicyFor } from './cli-session.js';
import { createCliSandboxRegistry } from './sandbox-backends.js';

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
  const orchestrator = createOrchestrator({
    sandboxRegistry:
      options.sandboxRegistry ??
      createCliSandboxRegistry(settings.enabledBackends?.value, session.backendOptions),
    enabledBackends: settings.enabledBackends?.value,
    allowedBackends: settings.allowedBackends,
    approvalPolicy: settings.approvalPolicy.value,
    policy: options.policy ?? sandboxPolicyFor(settings.sandboxMode.value, settings),
    execPolicy: createExecPolicy(rules),
    ruleWriter: createRuleFileAppender(join(session.rulesDirectory, 'default.rules')),
    reviewer: options.reviewer,
    onWarning: options.onWarning,
  });
  // The zsh fork's execs are decided one by one through a broker that lives as long as the door.
  const { shell } = session.toolPlan;
  const broker =
    shell.kind === 'zsh-fork'
      ? await startEscalationBroker({
          runtimeDir: runtimeDirectory(session),
          wrapperPath: shell.execveWrapperPath,
          onDiagnostic: (message) => options.onWarning(`zsh fork: ${message}`),
        })
      : undefined;
  const door = createUnifiedExec({
    orchestrator,
    spawner: createLocalSpawner(),
    toolPlan: session.toolPlan,
    cwd: options.cwd,
    userShell: session.userShell,
    allowLoginShell: session.configuration.user?.allowLoginShell,
    environment: settings.environment,
    baseEnvironment: options.env,
    prependPath: applyPatchBin(join(dirname(session.rulesDirectory), 'bin')),
    onWarning: options.onWarning,
    ...(broker ? { escalationBroker: broker } : {}),
    // Snapshots hold the login environment: under $UX_HOME (0700), each removed when its session ends.
    shellSnapshotDir: join(dirname(session.rulesDirectory), 'shell-snapshots'),
  });
  if (!broker) return door;
  return {
    ...door,
    async shutdown() {
      await door.shutdown();
      await broker.close();
    },
  };
}

/**
 * Where the broker's socket directory goes: `$UX_HOME/run`, which sandboxed commands cannot write,
 * unless that path is too long for a Unix socket (107 bytes), then the system's temporary directory.
 */
function runtimeDirectory(session: CliSession): string {
  const preferred = join(dirname(session.rulesDirectory), 'run');
  if (Buffer.byteLength(preferred) <= 60) {
    mkdirSync(preferred, { recursive: true, mode: 0o700 });
    return preferred;
  }
  return tmpdir();
}

/**
 * `apply_patch` and `applypatch` for the commands' PATH: scripts in `$UX_HOME/bin` that run
 * `ux apply-patch`, so a script that calls apply_patch works too (inside the sandbox, whose rules its
 * writes then follow). A model's own `apply_patch <<'EOF'` never gets there: the door intercepts it.
 */
function applyPatchBin(binDir: string): string[] {
  const ux = process.argv[1];
  if (!ux) return [];
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const script = `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(realpathSync(ux))} apply-patch "$@"\n`;
  try {
    mkdirSync(binDir, { recursive: true, mode: 0o755 });
    for (const name of ['apply_patch', 'applypatch']) {
      const target = join(binDir, name);
      if (existsSync(target) && readFileSync(target, 'utf8') === script) continue;
      const temporary = `${target}.${process.pid}`;
      writeFileSync(temporary, script, { mode: 0o755 });
      renameSync(temporary, target);
    }
  } catch {
    // Without it, only scripts that call apply_patch lose it; the model's own calls still work.
    return [];
  }
  return [binDir];
}
