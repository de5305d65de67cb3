import type * as z from 'zod/v4';
import { type ArgumentIssue, InvalidArgumentsError } from '../errors/errors.js';
import { didYouMean } from '../text/close-matches.js';
import {
  createExecCommandArgsSchema,
  type ExecCommandArgs,
  type ExecCommandVariant,
} from './exec-command.js';
import { type ShellCommandArgs, shellCommandArgsSchema } from './shell-command.js';
import { type WriteStdinArgs, writeStdinArgsSchema } from './write-stdin.js';

export type ParseResult<T> = { success: true; data: T } | { success: false; error: InvalidArgumentsError };

/**
 * Validates a tool call's arguments (an object, or the JSON text a model sent). Every problem is
 * reported at once, in words a model can act on; nothing throws.
 */
export function parseToolArguments<T>(tool: string, schema: z.ZodType<T>, raw: unknown): ParseResult<T> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return failure(tool, [
        { path: '', message: `arguments are not valid JSON (${(error as Error).message})` },
      ]);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return failure(tool, [
      { path: '', message: `arguments must be a JSON object, got ${describeValue(value)}` },
    ]);
  }
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return { success: true, data: parsed.data };
  return failure(
    tool,
    parsed.error.issues.flatMap((issue) => describeIssue(issue, schema)),
  );
}

export function parseExecCommandArgs(
  raw: unknown,
  variant?: ExecCommandVariant,
): ParseResult<ExecCommandArgs> {
  return parseToolArguments('exec_command', createExecCommandArgsSchema(variant), raw);
}

export function parseWriteStdinArgs(raw: unknown): ParseResult<WriteStdinArgs> {
  return parseToolArguments('write_stdin', writeStdinArgsSchema, raw);
}

export function parseShellCommandArgs(raw: unknown): ParseResult<ShellCommandArgs> {
  return parseToolArguments('shell_command', shellCommandArgsSchema, raw);
}

function failure(tool: string, issues: ArgumentIssue[]): ParseResult<never> {
  return { success: false, error: new InvalidArgumentsError({ tool, issues }) };
}

function describeIssue(issue: z.core.$ZodIssue, schema: z.ZodType): ArgumentIssue[] {
  const path = formatPath(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return [{ path, message: 'is required' }];
      return [
        {
          path,
          message: `must be ${EXPECTED[issue.expected] ?? issue.expected} (got ${describeValue(issue.input)})`,
        },
      ];
    case 'too_small':
    case 'too_big': {
      const got = typeof issue.input === 'number' ? ` (got ${issue.input})` : '';
      if (!/^Too (small|big)/.test(issue.message))
        return [{ path, message: `${stripSubject(issue.message, path)}${got}` }];
      if (issue.code === 'too_small' && issue.origin !== 'number' && Number(issue.minimum) === 1) {
        return [{ path, message: 'must not be empty' }];
      }
      const bound = issue.code === 'too_small' ? `at least ${issue.minimum}` : `at most ${issue.maximum}`;
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : '';
      return [{ path, message: `must be ${bound}${unit}${got}` }];
    }
    case 'invalid_value':
      return [
        {
          path,
          message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} (got ${describeValue(issue.input)})`,
        },
      ];
    case 'unrecognized_keys': {
      const known = knownKeys(schema, issue.path);
      return issue.keys.map((key) => ({
        path: formatPath([...issue.path, key]),
        message: `unknown argument${didYouMean(key, known)}`,
      }));
    }
    case 'invalid_union':
      return [{ path, message: `has an unsupported shape (got ${describeValue(issue.input)})` }];
    default:
      return [{ path, message: stripSubject(issue.message, path) }];
  }
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

/** Custom messages name their field ("yield_time_ms must not be negative"); the path already says it. */
function stripSubject(message: string, path: string): string {
  const leaf = path.split('.').pop() ?? '';
  return leaf && message.startsWith(`${leaf} `) ? message.slice(leaf.length + 1) : message;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`,
    )
    .join('');
}

/** The keys a (possibly nested) object schema accepts, for "did you mean". */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: unknown = schema;
  for (const part of [undefined, ...path]) {
    node = unwrap(node);
    if (part === undefined) continue;
    const shape = (node as { shape?: Record<string, unknown> }).shape;
    node = shape?.[String(part)];
  }
  const shape = (unwrap(node) as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

function unwrap(node: unknown): unknown {
  let current = node as
    | { def?: { type?: string; innerType?: unknown; in?: unknown; getter?: () => unknown } }
    | undefined;
  while (
    current?.def &&
    ['optional', 'default', 'pipe', 'nullable', 'lazy'].includes(current.def.type ?? '')
  ) {
    const { def } = current;
    current = (def.type === 'lazy' ? def.getter?.() : (def.innerType ?? def.in)) as typeof current;
  }
  return current;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}
