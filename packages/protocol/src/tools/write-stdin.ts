import * as z from 'zod/v4';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  MAX_SESSION_ID,
  MAX_YIELD_TIME_MS,
  MIN_EMPTY_YIELD_TIME_MS,
  MIN_YIELD_TIME_MS,
  WRITE_STDIN_DEFAULT_YIELD_TIME_MS,
} from './tool-limits.js';

// Built on first use (`z.lazy`): a process that never validates write_stdin arguments does not pay for it at start-up.
export const writeStdinArgsSchema = z.lazy(() =>
  z.strictObject({
    session_id: z
      .number()
      .int({ error: 'session_id must be a whole number' })
      .min(0, 'session_id must not be negative')
      .max(MAX_SESSION_ID, `session_id must be at most ${MAX_SESSION_ID}`)
      .describe('The session ID that exec_command reported ("Process running with session ID N").'),
    chars: z
      .string()
      .optional()
      .describe(
        'Characters to write to stdin; may contain control characters such as \\u0003 (Ctrl-C) or \\u0004 (Ctrl-D). Empty or omitted: only poll for output.',
      ),
    yield_time_ms: z
      .number()
      .int({ error: 'yield_time_ms must be a whole number' })
      .min(0, 'yield_time_ms must not be negative')
      .optional()
      .describe(
        `How long to wait for output, in milliseconds (default ${WRITE_STDIN_DEFAULT_YIELD_TIME_MS}; ${MIN_YIELD_TIME_MS} to ${MAX_YIELD_TIME_MS} after a write; an empty poll waits at least ${MIN_EMPTY_YIELD_TIME_MS}).`,
      ),
    max_output_tokens: z
      .number()
      .int({ error: 'max_output_tokens must be a whole number' })
      .min(0, 'max_output_tokens must not be negative')
      .optional()
      .describe(`Most output tokens to return (default ${DEFAULT_MAX_OUTPUT_TOKENS}).`),
  }),
);
export type WriteStdinArgs = z.output<typeof writeStdinArgsSchema>;
