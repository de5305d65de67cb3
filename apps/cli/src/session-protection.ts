import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EffectivePolicy, HostState } from '@ux/protocol/core';
import {
  type FoundRepositories,
  findRepositories,
  nodeFsView,
  resolveSandboxLayout,
  uxRuntimeRoots,
} from '@ux/protocol-utils';
import type { CliSession } from './cli-session.js';
import { configPaths } from './config-files.js';

/** What `protectSession` added, for `ux doctor` and the warnings. */
export interface SessionProtection {
  policy: EffectivePolicy;
  /** The nested-repository scan at the start, with its cost. */
  scan: FoundRepositories & { ms: number };
}

/**
 * The parts of a session's policy that keep ux's own state and the host's code out of the sandbox's
 * reach (docs/threat-model.md):
 * - `privateTmp` from `[sandbox_workspace_write] private_tmp` (default on);
 * - `hostState` (`sessionHostState`);
 * - `knownRepositories`: the git repositories inside the writable roots now (a bounded scan), whose
 *   configuration and hooks are then protected like the workspace's own.
 */
export function protectSession(
  policy: EffectivePolicy,
  session: CliSession,
  place: { cwd: string; homeDir: string; env: NodeJS.ProcessEnv },
): SessionProtection {
  const protectedPolicy: EffectivePolicy = {
    ...policy,
    ...(wantsPrivateTmp(session) ? { privateTmp: true } : {}),
    hostState: sessionHostState(session, place.env),
  };
  const started = performance.now();
  const found = repositoriesIn(protectedPolicy, place);
  const scan = { ...found, ms: performance.now() - started };
  return {
    policy:
      found.repositories.length > 0
        ? { ...protectedPolicy, knownRepositories: found.repositories }
        : protectedPolicy,
    scan,
  };
}

/**
 * What ux running here trusts outside the sandbox, for every policy it applies: `UX_HOME` (made now,
 * 0700, so that it exists before any command could make it), the requirements file, the CLI's own
 * program files, a configured zsh fork or bwrap binary, the rule files it loads and the programs it
 * runs on the host (review hooks, the automatic reviewer, a remote environment's command, with any
 * script they are given by absolute path) read-only; every ux process's runtime root, the quarantine
 * and `$UX_HOME/run` hidden.
 */
export function sessionHostState(session: CliSession, env: NodeJS.ProcessEnv): HostState {
  const paths = configPaths(env);
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  const { shell } = session.toolPlan;
  const { review, settings } = session;
  const hostCommands = [
    ...review.hooks.map((hook) => hook.command),
    ...(review.autoReview ? [review.autoReview.command] : []),
    ...settings.environments.flatMap((environment) =>
      environment.kind === 'command' ? [environment.command] : [],
    ),
  ];
  const programs = [
    cliProgramDirectory(),
    ...(shell.kind === 'zsh-fork' ? [shell.zshPath, shell.execveWrapperPath] : []),
    ...bwrapPath(session),
    // The sandbox plugins this host loaded run as the host: a command must not be able to change them.
    ...session.sandboxPlugins.plugins.flatMap((plugin) => plugin.packageRoot ?? plugin.file ?? []),
    ...settings.rules,
    ...hostCommands.flat(),
    process.execPath,
  ].filter((path): path is string => typeof path === 'string' && path.startsWith('/'));
  return {
    readOnly: [...new Set([paths.home, paths.requirements, ...programs])],
    hidden: [...uxRuntimeRoots(), session.quarantineDirectory, join(paths.home, 'run')],
  };
}

/**
 * For hosts that apply other clients' policies (`ux exec-server`): the session's private /tmp and the
 * repositories in each request's writable roots (scanned once per set of roots).
 */
export function policyProtector(
  session: CliSession,
  env: NodeJS.ProcessEnv,
): (policy: EffectivePolicy, place: { cwd: string; projectRoots?: readonly string[] }) => EffectivePolicy {
  const scans = new Map<string, string[]>();
  const privateTmp = wantsPrivateTmp(session);
  return (policy, place) => {
    const withTmp: EffectivePolicy = privateTmp ? { ...policy, privateTmp: true } : policy;
    const context = {
      cwd: place.cwd,
      ...(place.projectRoots ? { projectRoots: place.projectRoots } : {}),
      ...(env.HOME ? { homeDir: env.HOME } : {}),
      ...(env.TMPDIR ? { tmpdir: env.TMPDIR } : {}),
    };
    const roots = writableRoots(withTmp, context);
    const key = roots.join('\0');
    let repositories = scans.get(key);
    if (!repositories) {
      repositories = findRepositories(roots).repositories;
      scans.set(key, repositories);
    }
    const known = [...new Set([...(policy.knownRepositories ?? []), ...repositories])];
    return known.length > 0 ? { ...withTmp, knownRepositories: known } : withTmp;
  };
}

function wantsPrivateTmp(session: CliSession): boolean {
  return (
    session.settings.sandboxMode.value === 'workspace-write' && session.settings.workspaceWrite.privateTmp
  );
}

function repositoriesIn(
  policy: EffectivePolicy,
  place: { cwd: string; homeDir: string; env: NodeJS.ProcessEnv },
): FoundRepositories {
  return findRepositories(
    writableRoots(policy, {
      cwd: place.cwd,
      homeDir: place.homeDir,
      ...(place.env.TMPDIR ? { tmpdir: place.env.TMPDIR } : {}),
    }),
  );
}

/** The policy's existing writable roots (canonical), without `/` (full write has nothing to scan). */
function writableRoots(
  policy: EffectivePolicy,
  context: { cwd: string; projectRoots?: readonly string[]; homeDir?: string; tmpdir?: string },
): string[] {
  // Only the file system matters here: a network by domain gets its proxy endpoint later.
  const layout = resolveSandboxLayout({ ...policy, network: 'restricted' }, context, nodeFsView(), {
    rootsOnly: true,
  });
  return layout.writableRoots.map((root) => root.root).filter((root) => root !== '/');
}

/** The directory of the running CLI bundle (its real path), or undefined when it cannot be told. */
function cliProgramDirectory(): string | undefined {
  const script = process.argv[1];
  if (!script) return undefined;
  try {
    return dirname(realpathSync(script));
  } catch {
    return undefined;
  }
}

/** `[sandbox.bwrap] path` (or the deprecated `bwrap_path`): a program the host runs. */
function bwrapPath(session: CliSession): string[] {
  const path = session.configuration.user?.sandbox.bwrap?.value.path;
  return typeof path === 'string' ? [path] : [];
}
