import { type ParseArgsConfig, parseArgs } from 'node:util';
import { didYouMean } from '@ux/protocol/core';
import { UsageError } from './usage-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>
>;

/**
 * `parseArgs` in strict mode, with its errors turned into usage errors in our own words (Node's
 * messages change between versions).
 */
export function parseOptions<const O extends Options>(
  args: string[],
  options: O,
  helpCommand: string,
): Parsed<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const known = Object.entries(options).map(
      ([name, option]) => `--${name}${option.short ? ` (-${option.short})` : ''}`,
    );
    throw new UsageError(describeParseError(error, known), helpCommand);
  }
}

function describeParseError(error: unknown, known: readonly string[]): string {
  const { code, message } = error as { code?: string; message: string };
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option)
    return `unknown option ${option}${didYouMean(
      option,
      known.map((k) => k.split(' ')[0]!),
    )}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) return `option ${option} needs a value`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return message;
  return message;
}

/** One of `allowed`, or a usage error naming the option and the choices (with a close match). */
export function oneOf<T extends string>(
  value: string,
  allowed: readonly T[],
  option: string,
  helpCommand: string,
): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(
    `${option} must be one of ${allowed.join(', ')}, got "${value}"${didYouMean(value, allowed)}`,
    helpCommand,
  );
}

/** A non-negative integer option. */
export function nonNegativeInteger(value: string, option: string, helpCommand: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(
      `${option} must be a non-negative integer of milliseconds, got "${value}"`,
      helpCommand,
    );
  return Number(value);
}
