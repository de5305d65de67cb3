import * as z from 'zod/v4';
import type { JsonSchema } from './tool-definitions.js';

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
