import { executableName } from '../shell/shell-invocation.js';

/** What a rule says about the commands it matches, weakest first. */
export const DECISIONS = ['allow', 'prompt', 'forbidden'] as const;
export type Decision = (typeof DECISIONS)[number];

/** One pattern position: a word, or a list of alternative words. */
export type PatternToken = string | readonly string[];

/** Where a rule was written, for messages (`~/.ux/rules/default.rules:3:1`, `config.toml:12`). */
export interface RuleSource {
  file: string;
  line?: number;
  column?: number;
}

/**
 * A prefix rule: a command whose words start with `pattern` gets `decision`. `justification` is shown
 * in prompts and rejections (say what to do instead when forbidding).
 */
export interface PrefixRule {
  pattern: readonly PatternToken[];
  decision: Decision;
  justification?: string;
  source: RuleSource;
}

/** A rule that matched a command, and the words it matched. */
export interface RuleMatch {
  rule: PrefixRule;
  matchedPrefix: string[];
}

/** The stricter of two decisions (`forbidden` > `prompt` > `allow`). */
export function stricterDecision(a: Decision, b: Decision): Decision {
  return DECISIONS.indexOf(a) >= DECISIONS.indexOf(b) ? a : b;
}

/** The words a pattern position accepts. */
export function alternatives(token: PatternToken): readonly string[] {
  return typeof token === 'string' ? [token] : token;
}

/**
 * Whether `words` start with `pattern`. With `basename`, the first pattern word is compared with the
 * file name of an absolute program path (`/usr/bin/git` against `git`). `null` words (the shell expands
 * them) match nothing.
 */
export function matchesPattern(
  pattern: readonly PatternToken[],
  words: readonly (string | null)[],
  basename = false,
): boolean {
  if (words.length < pattern.length) return false;
  return pattern.every((token, index) => {
    const word = words[index];
    if (word === null || word === undefined) return false;
    const candidate = index === 0 && basename ? executableName(word) : word;
    return alternatives(token).includes(candidate);
  });
}
