import { homedir } from 'node:os';
import { posix } from 'node:path';
import { ConfigError, didYouMean } from '@ux/protocol/core';
import { executableName } from '../shell/shell-invocation.js';
import { bindArguments } from './bind-arguments.js';
import { buildPrefixRule, configError, PREFIX_RULE_PARAMETERS } from './build-prefix-rule.js';
import type { RuleSet } from './exec-policy.js';
import { parseStarlarkCalls, type StarlarkCall } from './parse-starlark-calls.js';
import type { PrefixRule } from './prefix-rule.js';

const FUNCTIONS = ['prefix_rule', 'host_executable', 'network_rule'];

/**
 * Reads a rule file in Codex's format (`*.rules`, a Starlark subset):
 *
 * ```starlark
 * # comments are fine
 * prefix_rule(pattern = ["git", ["push", "fetch"]], decision = "prompt", justification = "…")
 * host_executable(name = "git", paths = ["/usr/bin/git"])
 * ```
 *
 * Any other statement, an unknown function or argument, a wrong type, an empty pattern, an unknown
 * decision or a failing `match` / `not_match` example is a `ConfigError` at file:line:column.
 * `network_rule` is refused: ux has no managed network proxy to apply it.
 */
export function parseRulesFile(text: string, file: string, options: { homeDir?: string } = {}): RuleSet {
  const rules: PrefixRule[] = [];
  const hostExecutables = new Map<string, readonly string[]>();
  for (const call of parseStarlarkCalls(text, file)) applyCall(call, file, options, rules, hostExecutables);
  return { rules, hostExecutables };
}

/**
 * Every mistake in a rule file, not only the first (for `ux doctor`): each call is checked on its
 * own; a file that is not the Starlark subset at all is one mistake (the parser cannot go on past it).
 * Empty when `parseRulesFile` would accept the file.
 */
export function everyRuleFileError(
  text: string,
  file: string,
  options: { homeDir?: string } = {},
): ConfigError[] {
  let calls: StarlarkCall[];
  try {
    calls = parseStarlarkCalls(text, file);
  } catch (error) {
    if (ConfigError.isInstance(error)) return [error];
    throw error;
  }
  const errors: ConfigError[] = [];
  const rules: PrefixRule[] = [];
  const hostExecutables = new Map<string, readonly string[]>();
  for (const call of calls) {
    try {
      applyCall(call, file, options, rules, hostExecutables);
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      errors.push(error);
    }
  }
  return errors;
}

function applyCall(
  call: StarlarkCall,
  file: string,
  options: { homeDir?: string },
  rules: PrefixRule[],
  hostExecutables: Map<string, readonly string[]>,
): void {
  switch (call.name) {
    case 'prefix_rule':
      rules.push(buildPrefixRule(bindArguments(call, PREFIX_RULE_PARAMETERS, file), call.at, file));
      return;
    case 'host_executable': {
      const { name, paths } = hostExecutable(call, file, options.homeDir ?? homedir());
      hostExecutables.set(name, paths);
      return;
    }
    case 'network_rule':
      throw configError(
        file,
        call.at,
        'network_rule(...) is not supported: ux has no managed network proxy to apply it; keep network rules in a Codex-only rule file',
      );
    default:
      throw configError(
        file,
        call.at,
        `unknown function "${call.name}"${didYouMean(call.name, FUNCTIONS)}; a rule file holds only prefix_rule(...) and host_executable(...) calls`,
      );
  }
}

function hostExecutable(
  call: StarlarkCall,
  file: string,
  homeDir: string,
): { name: string; paths: string[] } {
  const args = bindArguments(call, ['name', 'paths'], file);
  const name = args.get('name');
  const paths = args.get('paths');
  if (!name || !paths) {
    throw configError(
      file,
      call.at,
      'host_executable needs a name and paths, e.g. host_executable(name = "git", paths = ["/usr/bin/git"])',
    );
  }
  if (
    name.value.kind !== 'string' ||
    name.value.value === '' ||
    name.value.value.includes('/') ||
    /^\.\.?$/.test(name.value.value)
  ) {
    throw configError(file, name.value.at, 'host_executable name must be a bare program name such as "git"');
  }
  const program = name.value.value;
  if (paths.value.kind !== 'list')
    throw configError(file, paths.value.at, 'host_executable paths must be a list of absolute paths');
  const resolved: string[] = [];
  for (const item of paths.value.items) {
    if (item.kind !== 'string') throw configError(file, item.at, 'host_executable paths must be strings');
    const raw = item.value;
    let path: string;
    if (raw.startsWith('~/')) path = posix.join(homeDir, raw.slice(2));
    else if (raw.startsWith('/')) path = posix.normalize(raw);
    else throw configError(file, item.at, `host_executable path "${raw}" must be absolute or start with ~/`);
    if (executableName(path) !== program) {
      throw configError(
        file,
        item.at,
        `host_executable path "${raw}" must end in the program name "${program}"`,
      );
    }
    if (!resolved.includes(path)) resolved.push(path);
  }
  return { name: program, paths: resolved };
}
