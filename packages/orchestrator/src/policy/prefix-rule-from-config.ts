import { ConfigError, didYouMean } from '@ux/protocol/core';
import { buildPrefixRule, PREFIX_RULE_PARAMETERS } from './build-prefix-rule.js';
import type { Position, StarlarkArgument, StarlarkValue } from './parse-starlark-calls.js';
import type { PrefixRule, RuleSource } from './prefix-rule.js';

/**
 * Validates one rule given as data (a config entry such as
 * `{ pattern = ["git", "push"], decision = "prompt", justification = "…" }`) with the same checks as a
 * rule file. `source` says where the entry is, for error messages and for the rule's own source.
 */
export function prefixRuleFromConfig(entry: unknown, source: RuleSource): PrefixRule {
  const at: Position = { line: source.line ?? 0, column: source.column ?? 0 };
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new ConfigError({
      ...source,
      reason: 'a rule must be a table with pattern, decision and justification',
    });
  }
  const args = new Map<string, StarlarkArgument>();
  for (const [name, value] of Object.entries(entry)) {
    args.set(name, { name, value: toValue(value, at), at });
  }
  const unknown = [...args.keys()].find(
    (name) => !(PREFIX_RULE_PARAMETERS as readonly string[]).includes(name),
  );
  if (unknown !== undefined) {
    throw new ConfigError({
      ...source,
      reason: `a rule has no key "${unknown}"${didYouMean(unknown, PREFIX_RULE_PARAMETERS)}; it takes ${PREFIX_RULE_PARAMETERS.join(', ')}`,
    });
  }
  return buildPrefixRule(args, at, source.file);
}

function toValue(value: unknown, at: Position): StarlarkValue {
  if (typeof value === 'string') return { kind: 'string', value, at };
  if (Array.isArray(value)) return { kind: 'list', items: value.map((item) => toValue(item, at)), at };
  return { kind: 'other', description: value === null ? 'null' : `a ${typeof value}`, at };
}
