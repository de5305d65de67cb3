import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '@ux/protocol/core';
import { createExecPolicy, type RuleSet } from './exec-policy.js';
import { parseRulesFile } from './parse-rules-file.js';

/**
 * Reads and parses rule files, in order, into one rule set. A file that cannot be read or parsed is a
 * `ConfigError` naming it; nothing is skipped silently.
 */
export async function loadRuleFiles(
  paths: readonly string[],
  options: { homeDir?: string } = {},
): Promise<RuleSet> {
  const sets: RuleSet[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new ConfigError(
        { file: path, reason: `cannot read the rule file: ${describe(error)}` },
        { cause: error },
      );
    }
    sets.push(parseRulesFile(text, path, options));
  }
  const { rules, hostExecutables } = createExecPolicy(...sets);
  return { rules, hostExecutables };
}

/** The `*.rules` files of a directory, sorted by name; none when the directory does not exist. */
export async function listRuleFiles(directory: string): Promise<string[]> {
  let names: string[];
  try {
    const entries = await readdir(directory, { withFileTypes: true });
    names = entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.rules'))
      .map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ConfigError(
      { file: directory, reason: `cannot list rule files: ${describe(error)}` },
      { cause: error },
    );
  }
  return names.sort().map((name) => join(directory, name));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
