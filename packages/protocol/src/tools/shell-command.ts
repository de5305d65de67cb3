import * as z from 'zod/v4';

// Built on first use (`z.lazy`): a process that never validates shell_command arguments does not pay for it at start-up.
/** The standalone one-shot shell tool, offered when the feature plan does not enable unified exec. */
export const shellCommandArgsSchema = z.lazy(() =>
  z.strictObject({
    command: z
      .string()
      .refine((command) => command.trim() !== '', 'must not be empty or only whitespace')
      .refine((command) => !command.includes('\0'), 'must not contain a NUL byte')
      .describe('The shell command to run to completion.'),
    workdir: z
      .string()
      .refine((workdir) => !workdir.includes('\0'), 'must not contain a NUL byte')
      .optional()
      .describe("Working directory; defaults to the session's directory."),
    timeout_ms: z
      .number()
      .int({ error: 'timeout_ms must be a whole number' })
      .positive('timeout_ms must be positive')
      .optional()
      .describe('Kill the command (and everything it started) after this many milliseconds.'),
  }),
);
export type ShellCommandArgs = z.output<typeof shellCommandArgsSchema>;
