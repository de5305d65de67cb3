import { type ParseArgsConfig, parseArgs } from 'node:util';
import { didYouMean } from '@ux/protocol/core';
import { codexSpelling } from './codex-spellings.js';
import { displayCommand } from './display-command.js';
import { UsageError } from './usage-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>
>;

export interface ParseSettings {
  /**
   * The command's positionals are a command to run (`ux exec -- CMD…`): an unknown option after the
   * first of them is probably the command's own, and the message says to put the command after `--`.
   */
  takesCommand?: boolean;
  /** How the command was invoked, for rewritten command lines (default: the help command without --help). */
  commandLine?: string;
}

/**
 * `parseArgs` in strict mode, with its errors turned into usage errors in our own words (Node's
 * messages change between versions).
 */
export function parseOptions<const O extends Options>(
  args: string[],
  options: O,
  helpCommand: string,
  settings: ParseSettings = {},
): Parsed<O> {
  const given = withNegativeValues(args, options);
  try {
    return parseArgs({ args: given, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error, given, options, helpCommand, settings), helpCommand);
  }
}

/**
 * `--yield-ms -5` as `--yield-ms=-5`: parseArgs takes a value that starts with a dash for an option of
 * its own and would report a missing value; the command's check then says what is wrong with it.
 */
function withNegativeValues(args: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return [...out, ...args.slice(i)];
    const next = args[i + 1];
    const option = stringOptionNamed(arg, options);
    if (option && next !== undefined && /^-\.?\d/.test(next)) {
      out.push(`${option}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** `--name` or `-n` when it names an option that takes a value. */
function stringOptionNamed(arg: string, options: Options): string | undefined {
  for (const [name, option] of Object.entries(options)) {
    if (option.type !== 'string') continue;
    if (arg === `--${name}`) return arg;
    if (option.short && arg === `-${option.short}`) return `--${name}`;
  }
  return undefined;
}

function describeParseError(
  error: unknown,
  args: readonly string[],
  options: Options,
  helpCommand: string,
  settings: ParseSettings,
): string {
  const { code, message } = error as { code?: string; message: string };
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) {
    const prefix = settings.commandLine ?? helpCommand.replace(/ --help$/, '');
    const tokens = parseTokens(args, options);
    const unknown = tokens.find(
      (token): token is OptionToken => token.kind === 'option' && token.rawName === option,
    );
    const firstWord = tokens.find((token) => token.kind === 'positional');
    // An unknown option after the first word of a command (`ux exec ls -la`) is the command's own;
    // before any word (`ux exec --aproval never -- ls`) it was meant for ux.
    const afterCommand =
      settings.takesCommand && unknown && firstWord !== undefined && unknown.index > firstWord.index;
    if (afterCommand) {
      const command = commandBeforeDashes(args, tokens);
      if (command) {
        const fixed = displayCommand([...command.uxArgs, '--', ...command.words]);
        return `unknown option ${option}; to run a command with options, put it after --: ${prefix} ${fixed}`;
      }
    }
    const codex = unknown ? codexHint(option, unknown, args, options, prefix) : undefined;
    if (codex) return `unknown option ${option}${codex}`;
    return `unknown option ${option}${didYouMean(
      option,
      Object.keys(options).map((name) => `--${name}`),
    )}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) return `option ${option} needs a value`;
  return message;
}

type Token = ReturnType<typeof parseArgs<{ tokens: true; strict: false }>>['tokens'][number];
type OptionToken = Extract<Token, { kind: 'option' }>;

function parseTokens(args: readonly string[], options: Options): Token[] {
  return parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true }).tokens;
}

/**
 * For a Codex spelling (`-p PROFILE`, `--enable X`, `-C DIR`, …): what ux calls it and the command
 * line rewritten with it, or, when this command has nothing like it, that said plainly.
 */
function codexHint(
  option: string,
  token: OptionToken,
  args: readonly string[],
  options: Options,
  prefix: string,
): string | undefined {
  const spelling = codexSpelling(option);
  if (!spelling) return undefined;
  if (spelling.none) return ` (Codex's ${spelling.codex}: ${spelling.none})`;
  const inline = token.inlineValue ? token.value : undefined;
  const next = args[token.index + 1];
  const separate =
    spelling.takesValue &&
    inline === undefined &&
    next !== undefined &&
    next !== '--' &&
    !next.startsWith('-')
      ? next
      : undefined;
  const value = inline ?? separate;
  const placeholder = spelling.codex.split(' ')[1] ?? 'VALUE';
  const ux = spelling.ux!(placeholder).join(' ');
  const missing = (spelling.needs ?? []).filter((name) => !Object.hasOwn(options, name));
  if (missing.length > 0)
    return ` (Codex's ${spelling.codex} is ${ux} in ux, which ${prefix} does not take${
      option === '-C' || option === '--cd' ? `: cd to the directory first, then run ${prefix}` : ''
    })`;
  if (spelling.takesValue && value === undefined) return ` (Codex's ${spelling.codex} is ${ux} in ux)`;
  const words = spelling.ux!(value ?? placeholder);
  const rest = [...args.slice(0, token.index), ...words, ...args.slice(token.index + (separate ? 2 : 1))];
  return `; Codex's ${spelling.codex} is ${ux} in ux: ${prefix} ${displayCommand(rest)}`;
}

/**
 * When a plain word came before the first `--`, the words from it on are taken for the command the
 * person meant to run (`ux exec ls -la`), and the ones before for ux's own options.
 */
function commandBeforeDashes(
  args: readonly string[],
  tokens: readonly Token[],
): { uxArgs: string[]; words: string[] } | undefined {
  for (const token of tokens) {
    if (token.kind === 'option-terminator') return undefined;
    if (token.kind === 'positional') {
      const words = args.slice(token.index).filter((word) => word !== '--');
      return { uxArgs: args.slice(0, token.index), words };
    }
  }
  return undefined;
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

/** A non-negative integer option, in milliseconds; each kind of wrong value says what is wrong with it. */
export function nonNegativeInteger(value: string, option: string, helpCommand: string): number {
  if (/^\d+$/.test(value) && Number.isSafeInteger(Number(value))) return Number(value);
  const number = value.trim() === '' ? Number.NaN : Number(value);
  const why =
    value === ''
      ? 'needs a value: a non-negative integer of milliseconds'
      : number < 0
        ? `must not be negative (a non-negative integer of milliseconds), got "${value}"`
        : Number.isSafeInteger(number)
          ? `must be written with digits only (a non-negative integer of milliseconds), got "${value}" (did you mean ${number}?)`
          : Number.isFinite(number) && number > Number.MAX_SAFE_INTEGER
            ? `is too large, got "${value}"`
            : Number.isFinite(number)
              ? `must be a whole number (a non-negative integer of milliseconds), got "${value}"`
              : `must be a non-negative integer of milliseconds, got "${value}"`;
  throw new UsageError(`${option} ${why}`, helpCommand);
}
