import { accessSync, constants, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { SourceLocation } from '@ux/config';
import { everyRuleFileError, listRuleFiles, loadRuleFiles } from '@ux/orchestrator';
import { closeMatches, didYouMean, formatLocation, UxError } from '@ux/protocol/core';
import type { CliSession } from './cli-session.js';
import type { DoctorCheck } from './doctor-command.js';
import type { Io } from './io.js';

/**
 * What the config points at, checked the way `ux exec` would meet it: rule files that are missing or
 * do not parse and backend ids the CLI does not ship stop every command (`fail`); a path that is not
 * there but is only skipped is a `warn`.
 */
export async function doctorConfigChecks(session: CliSession, io: Io): Promise<DoctorCheck[]> {
  return [
    ...(await ruleChecks(session, io.env)),
    ...backendIdChecks(session, io.platform),
    ...pathChecks(session),
  ];
}

/** Where the rule files are: `$UX_HOME/rules`, and `rules = […]` with where it was written. */
export interface RuleSources {
  directory: string;
  /** `rules = […]`'s files (absolute). */
  files: readonly string[];
  configured?: { location: SourceLocation };
}

/** The rule files of `$UX_HOME/rules` and `rules = […]`, loaded as `createCliDoor` loads them. */
async function ruleChecks(session: CliSession, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const configured = session.configuration.user?.session.rules;
  return await doctorRuleChecks(
    {
      directory: session.rulesDirectory,
      files: session.settings.rules,
      ...(configured ? { configured } : {}),
    },
    env,
  );
}

/**
 * Every rule file that is missing or does not parse, each with its file:line; also run when the
 * config files have mistakes (then with the rules directory only), so one run lists them all.
 */
export async function doctorRuleChecks(sources: RuleSources, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const directory = sources.directory;
  let listed: string[];
  try {
    listed = await listRuleFiles(directory);
  } catch (error) {
    if (!UxError.isInstance(error)) throw error;
    return [
      { name: 'rules', status: 'fail', detail: error.message, fix: `make ${directory} a readable directory` },
    ];
  }
  const configured = sources.configured;
  const files = [...listed, ...sources.files];
  const options = { homeDir: env.HOME ?? homedir() };
  const failures: DoctorCheck[] = [];
  // One file at a time, and every call of each, so that every mistake is named, not only the first.
  for (const file of files) {
    const listedAt = listed.includes(file)
      ? `move it out of ${directory}`
      : `remove it from rules = […]${configured ? ` at ${formatLocation(configured.location)}` : ''}`;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      failures.push({
        name: 'rules',
        status: 'fail',
        detail: `${file}: cannot read the rule file: ${error instanceof Error ? error.message : String(error)}`,
        fix:
          code === 'ENOENT'
            ? `create ${file}, or ${listedAt}`
            : `make ${file} a readable file, or ${listedAt}`,
      });
      continue;
    }
    for (const error of everyRuleFileError(text, file, options))
      failures.push({
        name: 'rules',
        status: 'fail',
        detail: error.message,
        fix: `correct the rule at the position named, or ${listedAt}`,
      });
  }
  if (failures.length > 0) return failures;
  try {
    await loadRuleFiles(files, options);
  } catch (error) {
    if (!UxError.isInstance(error)) throw error;
    return [{ name: 'rules', status: 'fail', detail: error.message, fix: 'correct the rule files named' }];
  }
  return [
    {
      name: 'rules',
      status: 'ok',
      detail:
        files.length === 0
          ? `no rule files (none in ${directory}, no rules = […] in the config)`
          : `${files.length} rule file${files.length === 1 ? '' : 's'} parsed: ${files.join(', ')}`,
    },
  ];
}

/** `sandbox_backends` ids the CLI does not ship: the registry refuses them, so every command fails. */
function backendIdChecks(session: CliSession, platform: NodeJS.Platform): DoctorCheck[] {
  const enabled = session.settings.enabledBackends;
  if (!enabled) return [];
  const BACKEND_IDS = session.sandboxPlugins.plugins.map((plugin) => plugin.id);
  const unknown = enabled.value.filter((id) => !BACKEND_IDS.includes(id));
  if (unknown.length === 0) return [];
  const replaced = enabled.value.flatMap((id) =>
    BACKEND_IDS.includes(id) ? [id] : closeMatches(id, BACKEND_IDS).slice(0, 1),
  );
  const suggested = [...new Set(replaced)];
  const fallback = session.sandboxPlugins.plugins
    .filter((plugin) => plugin.plugin.platforms.includes(platform))
    .map((plugin) => plugin.id);
  const list = (suggested.length > 0 ? suggested : fallback).map((id) => JSON.stringify(id)).join(', ');
  return unknown.map((id) => ({
    name: 'sandbox_backends',
    status: 'fail',
    detail: `${enabled.source}: unknown sandbox backend "${id}"${didYouMean(id, BACKEND_IDS)}; ux knows ${BACKEND_IDS.join(', ')}`,
    fix: `write sandbox_backends = [${list}] at ${enabled.source}`,
  }));
}

/** Paths the config names that are not there. */
function pathChecks(session: CliSession): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  const user = session.configuration.user;
  const file = session.configuration.paths.userConfig;

  const writeSection = user?.session.workspaceWrite;
  for (const root of session.settings.workspaceWrite.writableRoots) {
    const problem = kindProblem(root, 'directory');
    if (!problem) continue;
    // The sandbox leaves such a root out, so commands run; they just cannot write there.
    checks.push({
      name: 'writable root',
      status: 'warn',
      detail: `${root} ${problem}${writeSection ? ` (${formatLocation(writeSection.location)})` : ''}; commands cannot write there`,
      fix: 'create the directory, or remove it from [sandbox_workspace_write] writable_roots',
    });
  }

  const zshFork = user?.zshFork;
  const inUse = session.toolPlan.shell.kind === 'zsh-fork';
  for (const [key, path] of [
    ['zsh_fork.zsh_path', zshFork?.zshPath],
    ['zsh_fork.execve_wrapper_path', zshFork?.execveWrapperPath],
  ] as const) {
    const problem = path === undefined ? undefined : kindProblem(path, 'executable');
    if (!problem) continue;
    checks.push({
      name: key,
      status: inUse ? 'fail' : 'warn',
      detail: `${path} ${problem} (${file})${inUse ? '; every command would fail to start' : '; the zsh fork is not in use now'}`,
      fix: `point ${key} at the built file, or turn the zsh fork off`,
    });
  }

  // bwrap_path is the bwrap backend's to check: its line says what is wrong with it and the fix.
  return checks;
}

/** Why `path` is not a directory or an executable file, or undefined when it is. */
function kindProblem(path: string, kind: 'directory' | 'executable'): string | undefined {
  try {
    const stat = statSync(path);
    if (kind === 'directory') return stat.isDirectory() ? undefined : 'is not a directory';
    if (!stat.isFile()) return 'is not a file';
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? 'does not exist'
      : code === 'EACCES'
        ? 'is not executable'
        : `cannot be used (${code})`;
  }
}
