import type { Door } from '@ux/door';
import { type JSONSchema7, jsonSchema, type Tool, tool } from 'ai';

/**
 * The door's tools for the Vercel AI SDK: each definition's JSON schema as the tool's input schema,
 * each call handed to the door with the SDK's tool-call id (so the door's events carry it) and abort
 * signal (an aborted generation stops the door's wait; the process keeps running). The model reads
 * the door's receipt text.
 */
export function uxTools(door: Door): Record<string, Tool<unknown, string>> {
  return Object.fromEntries(
    door.tools.map((definition) => [
      definition.name,
      tool<unknown, string>({
        description: definition.description,
        inputSchema: jsonSchema(definition.parameters as JSONSchema7),
        execute: async (input, { toolCallId, abortSignal }) =>
          (
            await door.call(definition.name, input, {
              callId: toolCallId,
              ...(abortSignal ? { signal: abortSignal } : {}),
            })
          ).text,
      }),
    ]),
  );
}
