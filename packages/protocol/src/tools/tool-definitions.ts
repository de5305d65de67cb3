import * as z from 'zod/v4';
import { createExecCommandArgsSchema, type ExecCommandVariant } from './exec-command.js';
import { execResultSchema } from './exec-result.js';
import { shellCommandArgsSchema } from './shell-command.js';
import { writeStdinArgsSchema } from './write-stdin.js';

/** A JSON Schema object as handed to a model. */
export type JsonSchema = Record<string, unknown>;

/** A model-ready function tool: name, description, parameter schema and (for structured consumers) result schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
  outputSchema?: JsonSchema;
}

export type ToolName = 'exec_command' | 'write_stdin' | 'shell_command';

export interface ExecCommandToolOptions extends ExecCommandVariant {
  /** Adds the Windows notes to the description. */
  platform?: NodeJS.Platform;
}

const WINDOWS_NOTES =
  ' On Windows the default shell is PowerShell: join commands with `;`, quote paths that contain spaces, and never delete outside the working directory.';

export function execCommandToolDefinition(options: ExecCommandToolOptions = {}): ToolDefinition {
  return {
    name: 'exec_command',
    description: `Run a shell command. Returns its output once it exits, or, if it is still running after yield_time_ms, a session ID to pass to write_stdin to send input or read more output.${
      options.platform === 'win32' ? WINDOWS_NOTES : ''
    }`,
    parameters: toJsonSchema(createExecCommandArgsSchema(options), 'input'),
    outputSchema: toJsonSchema(execResultSchema, 'output'),
  };
}

export function writeStdinToolDefinition(): ToolDefinition {
  return {
    name: 'write_stdin',
    description:
      'Write characters to a running exec_command session and return its recent output. Empty chars only polls for output.',
    parameters: toJsonSchema(writeStdinArgsSchema, 'input'),
    outputSchema: toJsonSchema(execResultSchema, 'output'),
  };
}

export function shellCommandToolDefinition(): ToolDefinition {
  return {
    name: 'shell_command',
    description: 'Run a shell command to completion and return its exit code and output.',
    parameters: toJsonSchema(shellCommandArgsSchema, 'input'),
  };
}

/**
 * JSON Schema from a zod schema, without the `$schema` marker and the implicit safe-integer bounds that
 * only add noise to a model's context.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete generated.$schema;
  return stripSafeIntegerBounds(generated) as JsonSchema;
}

function stripSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripSafeIntegerBounds);
  if (typeof node !== 'object' || node === null) return node;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    result[key] = stripSafeIntegerBounds(value);
  }
  return result;
}
