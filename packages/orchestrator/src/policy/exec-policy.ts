import { executableName } from '../shell/shell-invocation.js';
import { alternatives, matchesPattern, type PrefixRule, type RuleMatch } from './prefix-rule.js';

/** Rules and host-executable declarations, as read from rule files or config. */
export interface RuleSet {
  rules: readonly PrefixRule[];
  /** `host_executable(name, paths)`: the absolute paths a bare program name may stand for. */
  hostExecutables: ReadonlyMap<string, readonly string[]>;
}

export interface MatchOptions {
  /**
   * The first word is a program path the system resolved (an exec the zsh fork intercepted), not one
   * the model wrote: `allow` rules for its file name vouch for it unless a `host_executable`
   * declaration for that name lists other paths (Codex's `resolve_host_executables`).
   */
  resolvedProgram?: boolean;
}

/** A loaded exec policy. Immutable: `withRule` returns a new one. */
export interface ExecPolicy extends RuleSet {
  /** Every rule that matches the command (see `createExecPolicy` for how program paths match). */
  matches(words: readonly (string | null)[], options?: MatchOptions): RuleMatch[];
  withRule(rule: PrefixRule): ExecPolicy;
}

/**
 * Builds an exec policy from rule sets, in order (later `host_executable` entries for a name replace
 * earlier ones). Matching: a rule matches when the command's words start with its pattern. The first
 * word is compared as written; for an absolute program path (`/usr/bin/git`) the rules for its file name
 * (`git`) apply too, with one restriction: an `allow` rule only vouches for the paths a
 * `host_executable` declaration lists, so `/tmp/x/git` never inherits `git`'s allow rules, while
 * `prompt` and `forbidden` rules always apply. For a program the system resolved (`resolvedProgram`)
 * an undeclared name's allow rules apply too; its caller checks that the file is not the agent's own.
 */
export function createExecPolicy(...sets: readonly Partial<RuleSet>[]): ExecPolicy {
  const rules = sets.flatMap((set) => set.rules ?? []);
  const hostExecutables = new Map<string, readonly string[]>();
  for (const set of sets)
    for (const [name, paths] of set.hostExecutables ?? []) hostExecutables.set(name, paths);
  return build(rules, hostExecutables);
}

function build(
  rules: readonly PrefixRule[],
  hostExecutables: ReadonlyMap<string, readonly string[]>,
): ExecPolicy {
  const byProgram = new Map<string, PrefixRule[]>();
  for (const rule of rules) {
    for (const program of new Set(alternatives(rule.pattern[0]!))) {
      const list = byProgram.get(program) ?? [];
      list.push(rule);
      byProgram.set(program, list);
    }
  }
  return {
    rules,
    hostExecutables,
    matches(words, options) {
      const program = words[0];
      if (program === null || program === undefined) return [];
      const found: RuleMatch[] = [];
      const prefix = (rule: PrefixRule) => words.slice(0, rule.pattern.length) as string[];
      for (const rule of byProgram.get(program) ?? []) {
        if (matchesPattern(rule.pattern, words)) found.push({ rule, matchedPrefix: prefix(rule) });
      }
      const name = executableName(program);
      if (program.startsWith('/') && name !== program) {
        const paths = hostExecutables.get(name);
        const declared = paths ? paths.includes(program) : options?.resolvedProgram === true;
        for (const rule of byProgram.get(name) ?? []) {
          if (rule.decision === 'allow' && !declared) continue;
          if (found.some((match) => match.rule === rule)) continue;
          if (matchesPattern(rule.pattern, words, true)) found.push({ rule, matchedPrefix: prefix(rule) });
        }
      }
      return found;
    },
    withRule: (rule) => build([...rules, rule], hostExecutables),
  };
}
