import type { ExecCommandArgs, ExecCommandVariant } from './exec-command.js';
import { execCommandParameters } from './exec-command-parameters.js';
import type { ShellCommandArgs } from './shell-command.js';
import { MAX_SESSION_ID } from './tool-limits.js';
import type { WriteStdinArgs } from './write-stdin.js';

// The common, well-formed tool call, accepted without the zod schemas: a process that only ever runs
// good calls (a CLI's one `exec_command`) never loads a schema library. Each check returns the
// arguments when the schema would certainly accept them with the same result, and `undefined`
// otherwise; then the schema decides and explains (`parseExecCommandArgs` and its siblings).
// quick-arguments.test.ts holds these to the schemas: nothing accepted here may be refused there.

type Check = (value: unknown) => boolean;

const text: Check = (value) => typeof value === 'string';
const nonEmptyText: Check = (value) => typeof value === 'string' && value.length > 0;
const notBlank: Check = (value) => typeof value === 'string' && value.trim() !== '';
/** Text that reaches the operating system (a command, a path): a NUL byte is the schema's to explain. */
const osText =
  (check: Check): Check =>
  (value) =>
    check(value) && !(value as string).includes('\0');
const flag: Check = (value) => typeof value === 'boolean';
const count: Check = (value) => Number.isSafeInteger(value) && (value as number) >= 0;

const EXEC_COMMAND: Record<string, Check> = {
  cmd: osText(notBlank),
  workdir: osText(text),
  shell: osText(nonEmptyText),
  tty: flag,
  login: flag,
  yield_time_ms: count,
  max_output_tokens: count,
  environment_id: nonEmptyText,
  // `with_additional_permissions` and `additional_permissions` are left to the schema.
  sandbox_permissions: (value) => value === 'use_default' || value === 'require_escalated',
  justification: text,
  prefix_rule: (value) => Array.isArray(value) && value.length > 0 && value.every(nonEmptyText),
};

const WRITE_STDIN: Record<string, Check> = {
  session_id: (value) => count(value) && (value as number) <= MAX_SESSION_ID,
  chars: text,
  yield_time_ms: count,
  max_output_tokens: count,
};

const SHELL_COMMAND: Record<string, Check> = {
  command: osText(notBlank),
  workdir: osText(text),
  timeout_ms: (value) => Number.isSafeInteger(value) && (value as number) > 0,
};

export function quickExecCommandArgs(
  raw: unknown,
  variant: ExecCommandVariant = {},
): ExecCommandArgs | undefined {
  const offered = execCommandParameters(variant).filter((name) => name in EXEC_COMMAND);
  return quick(raw, offered, EXEC_COMMAND, 'cmd') as ExecCommandArgs | undefined;
}

export function quickWriteStdinArgs(raw: unknown): WriteStdinArgs | undefined {
  return quick(raw, Object.keys(WRITE_STDIN), WRITE_STDIN, 'session_id') as WriteStdinArgs | undefined;
}

export function quickShellCommandArgs(raw: unknown): ShellCommandArgs | undefined {
  return quick(raw, Object.keys(SHELL_COMMAND), SHELL_COMMAND, 'command') as ShellCommandArgs | undefined;
}

/** The arguments rebuilt in the schema's key order, or `undefined` at the first doubt. */
function quick(
  raw: unknown,
  offered: readonly string[],
  checks: Record<string, Check>,
  required: string,
): Record<string, unknown> | undefined {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const given = value as Record<string, unknown>;
  const keys = Object.keys(given);
  if (!(required in given) || keys.some((key) => !offered.includes(key))) return undefined;
  const result: Record<string, unknown> = {};
  for (const name of offered) {
    if (!(name in given)) continue;
    const field = given[name];
    if (!checks[name]?.(field)) return undefined;
    result[name] = Array.isArray(field) ? [...field] : field;
  }
  return result;
}
