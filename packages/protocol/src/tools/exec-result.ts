import * as z from 'zod/v4';

// Built on first use (`z.lazy`): a process that never validates results does not pay for it at start-up.
/** The structured result of `exec_command` and `write_stdin` (the model reads a text rendering of it). */
export const execResultSchema = z.lazy(() =>
  z.object({
    chunk_id: z
      .string()
      .optional()
      .describe('Six lowercase hex characters identifying this piece of output.'),
    wall_time_seconds: z.number().describe('Time spent waiting in this call.'),
    exit_code: z.number().int().optional().describe('Present once the process has exited.'),
    session_id: z.number().int().optional().describe('Present while the process is still running.'),
    original_token_count: z.number().int().optional().describe('Tokens of output before truncation.'),
    output_bytes: z
      .number()
      .int()
      .optional()
      .describe('Bytes the process printed in this wait, all of them, shown or not.'),
    output_lines: z
      .number()
      .int()
      .optional()
      .describe('Lines the process printed in this wait, all of them.'),
    sandbox_notices: z
      .array(z.string())
      .optional()
      .describe(
        'What the sandbox did besides running the command (a protected path taken back, a rerun without the sandbox), one line each.',
      ),
    sandbox_denied: z
      .boolean()
      .optional()
      .describe(
        'True when the sandbox blocked the command and it was not run again: exit code and output are those of the blocked run.',
      ),
    output: z
      .string()
      .describe(
        'What the text shows: within max_output_tokens (default 10000), head and tail with the middle marked.',
      ),
  }),
);
export type ExecResult = z.output<typeof execResultSchema>;
