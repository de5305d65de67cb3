import { ConfigError, didYouMean } from '@ux/protocol/core';
import { shlexSplit } from '../shell/shlex-split.js';
import type { Position, StarlarkArgument, StarlarkValue } from './parse-starlark-calls.js';
import {
  DECISIONS,
  type Decision,
  matchesPattern,
  type PatternToken,
  type PrefixRule,
} from './prefix-rule.js';

/** The parameters of `prefix_rule`, in Codex's positional order. */
export const PREFIX_RULE_PARAMETERS = ['pattern', 'decision', 'match', 'not_match', 'justification'] as const;

/**
 * Validates the arguments of one `prefix_rule` (from a rule file or a config entry) and returns the
 * rule. `match` / `not_match` examples are checked against the pattern here, like unit tests of the rule.
 */
export function buildPrefixRule(
  args: ReadonlyMap<string, StarlarkArgument>,
  at: Position,
  file: string,
): PrefixRule {
  const fail = (position: Position, reason: string) => configError(file, position, reason);
  const patternArgument = args.get('pattern');
  if (!patternArgument) {
    throw fail(
      at,
      'prefix_rule needs a pattern, e.g. prefix_rule(pattern = ["git", "push"], decision = "prompt")',
    );
  }
  const pattern = parsePattern(patternArgument.value, fail);
  const decision = parseDecision(args.get('decision')?.value, fail);
  const justification = parseJustification(args.get('justification')?.value, fail);
  const rule: PrefixRule = {
    pattern,
    decision,
    ...(justification === undefined ? {} : { justification }),
    source: location(file, at),
  };
  for (const example of parseExamples(args.get('match')?.value, 'match', fail)) {
    if (!exampleMatches(pattern, example.words)) {
      throw fail(
        example.at,
        `match example ${JSON.stringify(example.words)} does not match the pattern ${JSON.stringify(pattern)}`,
      );
    }
  }
  for (const example of parseExamples(args.get('not_match')?.value, 'not_match', fail)) {
    if (exampleMatches(pattern, example.words)) {
      throw fail(
        example.at,
        `not_match example ${JSON.stringify(example.words)} matches the pattern ${JSON.stringify(pattern)}`,
      );
    }
  }
  return rule;
}

type Fail = (at: Position, reason: string) => ConfigError;

function parsePattern(value: StarlarkValue, fail: Fail): PatternToken[] {
  if (value.kind !== 'list') {
    throw fail(value.at, `pattern must be a list such as ["git", ["push", "fetch"]], got ${kind(value)}`);
  }
  if (value.items.length === 0) throw fail(value.at, 'pattern must not be empty');
  return value.items.map((item, index) => {
    if (item.kind === 'string') return nonEmptyWord(item, `pattern element ${index + 1}`, fail);
    if (item.kind === 'list') {
      if (item.items.length === 0) {
        throw fail(item.at, `pattern element ${index + 1}: a list of alternatives must not be empty`);
      }
      const words = item.items.map((alternative) => {
        if (alternative.kind !== 'string') {
          throw fail(
            alternative.at,
            `pattern element ${index + 1}: alternatives must be strings, got ${kind(alternative)}`,
          );
        }
        return nonEmptyWord(alternative, `pattern element ${index + 1}`, fail);
      });
      return words.length === 1 ? words[0]! : words;
    }
    throw fail(
      item.at,
      `pattern element ${index + 1} must be a string or a list of alternatives, got ${kind(item)}`,
    );
  });
}

function nonEmptyWord(value: StarlarkValue & { kind: 'string' }, what: string, fail: Fail): string {
  if (value.value === '') throw fail(value.at, `${what} must not be an empty string`);
  return value.value;
}

function parseDecision(value: StarlarkValue | undefined, fail: Fail): Decision {
  // Codex's default: a rule without a decision allows.
  if (value === undefined) return 'allow';
  if (value.kind !== 'string') throw fail(value.at, `decision must be a string, got ${kind(value)}`);
  if (!(DECISIONS as readonly string[]).includes(value.value)) {
    throw fail(
      value.at,
      `unknown decision "${value.value}"${didYouMean(value.value, DECISIONS)}; expected one of ${DECISIONS.join(', ')}`,
    );
  }
  return value.value as Decision;
}

function parseJustification(value: StarlarkValue | undefined, fail: Fail): string | undefined {
  if (value === undefined) return undefined;
  if (value.kind !== 'string') throw fail(value.at, `justification must be a string, got ${kind(value)}`);
  if (value.value.trim() === '') throw fail(value.at, 'justification must not be empty');
  return value.value;
}

function parseExamples(
  value: StarlarkValue | undefined,
  name: string,
  fail: Fail,
): { words: string[]; at: Position }[] {
  if (value === undefined) return [];
  if (value.kind !== 'list') throw fail(value.at, `${name} must be a list of examples, got ${kind(value)}`);
  return value.items.map((example) => {
    if (example.kind === 'string') {
      const words = shlexSplit(example.value);
      if (words === null)
        throw fail(example.at, `${name} example ${JSON.stringify(example.value)} has an unterminated quote`);
      if (words.length === 0) throw fail(example.at, `${name} example must not be empty`);
      return { words, at: example.at };
    }
    if (example.kind === 'list') {
      if (example.items.length === 0) throw fail(example.at, `${name} example must not be an empty list`);
      const words = example.items.map((word) => {
        if (word.kind !== 'string')
          throw fail(word.at, `${name} example words must be strings, got ${kind(word)}`);
        return word.value;
      });
      return { words, at: example.at };
    }
    throw fail(example.at, `${name} examples must be strings or lists of strings, got ${kind(example)}`);
  });
}

function exampleMatches(pattern: readonly PatternToken[], words: readonly string[]): boolean {
  return (
    matchesPattern(pattern, words) || (words[0]!.startsWith('/') && matchesPattern(pattern, words, true))
  );
}

function kind(value: StarlarkValue): string {
  if (value.kind === 'string') return `the string ${JSON.stringify(value.value)}`;
  if (value.kind === 'list') return 'a list';
  return value.description;
}

/** A `ConfigError` at a position; line or column 0 means unknown (config entries without one). */
export function configError(file: string, at: Position, reason: string): ConfigError {
  return new ConfigError({ ...location(file, at), reason });
}

function location(file: string, at: Position): { file: string; line?: number; column?: number } {
  return {
    file,
    ...(at.line > 0 ? { line: at.line } : {}),
    ...(at.line > 0 && at.column > 0 ? { column: at.column } : {}),
  };
}
