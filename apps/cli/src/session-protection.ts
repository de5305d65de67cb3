import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  type EffectivePolicy,
  type FoundRepositories,
  findRepositories,
  nodeFsView,
  resolveSandboxLayout,
} from '@ux/protocol/core';
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
 * - `hostState.readOnly`: `UX_HOME` (made now, 0700, so that it exists before any command could make
 *   it), the requirements file, the CLI's own program files, the zsh fork and the bwrap binary when
 *   configured — read-only inside every writable root that holds them, guarded when missing;
 * - `hostState.hidden`: the quarantine and `$UX_HOME/run`;
 * - `knownRepositories`: the git repositories inside the writable roots now (a bounded scan), whose
 *   configuration and hooks are then protected like the workspace's own.
 */
export function protectSession(
  policy: EffectivePolicy,
  session: CliSession,
  place: { cwd: string; homeDir: string; env: NodeJS.ProcessEnv },
): SessionProtection {
  const paths = configPaths(place.env);
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  const { shell } = session.toolPlan;
  // Everything configuration makes ux trust outside the sandbox: its own programs, the rule files it
  // loads, and the programs it runs on the host (review hooks, the automatic reviewer, a remote
  // environment's command).
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
    ...(session.backendOptions.bwrapPath ? [session.backendOptions.bwrapPath] : []),
    ...settings.rules,
    // The program and any script it is given by absolute path.
    ...hostCommands.flat(),
  ].filter((path): path is string => typeof path === 'string' && path.startsWith('/'));
  const protectedPolicy: EffectivePolicy = {
    ...policy,
    ...(session.settings.sandboxMode.value === 'workspace-write' && session.settings.workspaceWrite.privateTmp
      ? { privateTmp: true }
      : {}),
    hostState: {
      readOnly: [...new Set([paths.home, paths.requirements, ...programs])],
      hidden: [session.quarantineDirectory, join(paths.home, 'run')],
    },
  };
  const started = performance.now();
  const layout = resolveSandboxLayout(
    protectedPolicy,
    {
      cwd: place.cwd,
      homeDir: place.homeDir,
      ...(place.env.TMPDIR ? { tmpdir: place.env.TMPDIR } : {}),
    },
    nodeFsView(),
  );
  const roots = layout.writableRoots.map((root) => root.root).filter((root) => root !== '/');
  const found = findRepositories(roots);
  const scan = { ...found, ms: performance.now() - started };
  return {
    policy:
      found.repositories.length > 0
        ? { ...protectedPolicy, knownRepositories: found.repositories }
        : protectedPolicy,
    scan,
  };
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
