import { realpathSync } from 'node:fs';
import { isAbsolute, normalize } from 'node:path';
import type { EffectivePolicy } from '@ux/protocol/core';
import { isUnder, nodeFsView, resolveSandboxLayout } from '@ux/protocol-utils';

/**
 * What an escalation is judged against: the directories the sandbox of this session can write, the
 * session's start, and the environment the door gave the command (the session's, not the sandboxed
 * shell's). Built by `escalationScope` for each exec that would escalate.
 */
export interface EscalationScope {
  /**
   * Canonical directories the sandboxed command can write: every writable root of the session's and the
   * attempt's policies (the project root, `/tmp`, `$TMPDIR`, each `--writable-root`), plus `/tmp` and
   * every `$TMPDIR` named anywhere (see `tmpRoots`). `/` when the policy restricts nothing.
   */
  writableRoots: readonly string[];
  /** The writable roots of the layouts alone (without the `/tmp` and `$TMPDIR` added to them). */
  layoutRoots: readonly string[];
  /**
   * `/tmp` and each `$TMPDIR` (the session's, the command's, the intercepted shell's), as written and
   * canonical. With a private `/tmp` the sandbox sees its own directory there, not the host's: a path
   * below them means something else outside; without one they are writable roots anyway.
   */
  tmpRoots: readonly string[];
  /** A private `/tmp` replaced the host's inside the sandbox (`EffectivePolicy.privateTmp` took effect). */
  privateTmp: boolean;
  /** When the session started (ms, host clock): a `ctime` at or after it is a change of this session. */
  sessionStartMs: number;
  /** The environment the door gave the command: `PATH`, `HOME`, `XDG_CONFIG_HOME`, `GIT_DIR` as the session has them. */
  env: Readonly<Record<string, string>>;
  /** The session's home directory (`env.HOME`, else the host's). */
  homeDir: string | undefined;
}

export interface EscalationScopeInput {
  /** The policies that could apply to the command: the session's, and its attempt's (widened) one. */
  policies: readonly EffectivePolicy[];
  /** The session directory (`project_roots`). */
  projectRoot: string;
  /** Where the command started (the policy's `cwd`); the project root when absent. */
  commandCwd?: string;
  /** `$TMPDIR` values from the session, the command and the intercepted shell (any may be absent). */
  tmpdirs: readonly (string | undefined)[];
  sessionStartMs: number;
  env: Readonly<Record<string, string>>;
  homeDir: string | undefined;
}

/**
 * The scope of one escalation: `resolveSandboxLayout` of each policy for the project root and the
 * command's cwd, the union of their writable roots, plus `/tmp` and every `$TMPDIR` (when the policy's
 * `privateTmp` dropped them from the layout, they stand for the sandbox's private directory; a program
 * or working directory there must not be taken for the host's file of the same name).
 */
export function escalationScope(input: EscalationScopeInput): EscalationScope {
  const fs = nodeFsView();
  const roots = new Set<string>();
  let privateTmp = false;
  const tmpdir = input.tmpdirs.find((value) => value !== undefined && isAbsolute(value));
  const cwds = [...new Set([input.projectRoot, input.commandCwd ?? input.projectRoot])];
  for (const policy of new Set(input.policies)) {
    if (policy.fileSystem.kind !== 'restricted') {
      roots.add('/');
      continue;
    }
    for (const cwd of cwds) {
      const layout = resolveSandboxLayout(
        policy,
        {
          cwd,
          projectRoots: [input.projectRoot],
          ...(tmpdir ? { tmpdir } : {}),
          ...(input.homeDir ? { homeDir: input.homeDir } : {}),
        },
        fs,
        input.homeDir ? { homeDir: input.homeDir } : {},
      );
      for (const root of layout.writableRoots) roots.add(root.root);
      privateTmp ||= layout.privateTmp;
    }
  }
  const tmpRoots = new Set<string>();
  for (const value of ['/tmp', ...input.tmpdirs]) {
    if (value === undefined || !isAbsolute(value)) continue;
    const written = normalize(value).replace(/(.)\/+$/, '$1');
    tmpRoots.add(written);
    tmpRoots.add(canonical(written));
  }
  const layoutRoots = [...roots];
  for (const root of tmpRoots) roots.add(root);
  return {
    writableRoots: [...roots],
    layoutRoots,
    tmpRoots: [...tmpRoots],
    privateTmp,
    sessionStartMs: input.sessionStartMs,
    env: input.env,
    homeDir: input.homeDir,
  };
}

/** The writable root of `scope` that contains the canonical `path`, if any. */
export function writableRootOf(
  scope: Pick<EscalationScope, 'writableRoots'>,
  path: string,
): string | undefined {
  return scope.writableRoots.find((root) => isUnder(path, root));
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
