import { userInfo } from 'node:os';
import { join } from 'node:path';
import {
  planTools,
  type ResolvedFeatures,
  resolveFeatures,
  resolveSessionSettings,
  type SessionResolution,
  type ToolPlan,
} from '@ux/features';
import type { ApprovalPolicy, SandboxMode, SandboxPolicy } from '@ux/protocol/core';
import { configPaths, type LoadedConfiguration, loadConfiguration } from './config-files.js';
import type { Io } from './io.js';

/** What the command line chose for this run. */
export interface SessionFlags {
  approvalPolicy?: ApprovalPolicy;
  sandboxMode?: SandboxMode;
  /** The option that chose the sandbox mode, for messages (default `--sandbox`). */
  sandboxOption?: string;
  profile?: string;
  enable?: string[];
  disable?: string[];
}

/** Everything a command needs from configuration, resolved once. */
export interface CliSession {
  configuration: LoadedConfiguration;
  features: ResolvedFeatures;
  settings: SessionResolution;
  toolPlan: ToolPlan;
  userShell: string;
  /** `$UX_HOME/rules`: rule files found there are loaded, approved prefixes are saved there. */
  rulesDirectory: string;
  /** `$UX_HOME/cache`: what sandbox probes learned, so later starts skip them. */
  cacheDirectory: string;
  /** `$UX_HOME/quarantine`: where protected paths a sandboxed command created are moved. */
  quarantineDirectory: string;
  warnings: string[];
}

/** Reads config and requirements and resolves features and session settings (throws `ConfigError`). */
export function loadCliSession(io: Io, flags: SessionFlags = {}): CliSession {
  const configuration = loadConfiguration(io.env);
  const features = resolveFeatures({
    platform: io.platform,
    user: configuration.user,
    requirements: configuration.requirements,
    profile: flags.profile,
    cli: { enable: flags.enable ?? [], disable: flags.disable ?? [] },
  });
  const settings = resolveSessionSettings({
    user: configuration.user,
    requirements: configuration.requirements,
    profile: features.profile?.name,
    cli: {
      approvalPolicy:
        flags.approvalPolicy === undefined
          ? undefined
          : { value: flags.approvalPolicy, flag: `--approval ${flags.approvalPolicy as string}` },
      sandboxMode:
        flags.sandboxMode === undefined
          ? undefined
          : { value: flags.sandboxMode, flag: `${flags.sandboxOption ?? '--sandbox'} ${flags.sandboxMode}` },
    },
  });
  const userShell = io.env.SHELL || safeUserShell() || '/bin/bash';
  const toolPlan = planTools({
    flags: features.flags,
    platform: io.platform,
    userShell,
    zshFork: configuration.user?.zshFork,
    allowLoginShell: configuration.user?.allowLoginShell,
  });
  return {
    configuration,
    features,
    settings,
    toolPlan,
    userShell,
    rulesDirectory: join(configPaths(io.env).home, 'rules'),
    cacheDirectory: join(configPaths(io.env).home, 'cache'),
    quarantineDirectory: join(configPaths(io.env).home, 'quarantine'),
    warnings: [
      ...(configuration.user?.warnings ?? []),
      ...(configuration.requirements?.warnings ?? []),
      ...features.warnings,
      ...toolPlan.warnings,
    ],
  };
}

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

/** The account's login shell, when the system knows it. */
export function safeUserShell(): string | undefined {
  try {
    return userInfo().shell ?? undefined;
  } catch {
    return undefined;
  }
}
