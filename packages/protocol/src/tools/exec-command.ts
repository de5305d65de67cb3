import * as z from 'zod/v4';
import { additionalPermissionsSchema, sandboxPermissionsValues } from '../policy/sandbox-permissions.js';
import { execCommandParameters } from './exec-command-parameters.js';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  EXEC_COMMAND_DEFAULT_YIELD_TIME_MS,
  MAX_YIELD_TIME_MS,
  MIN_YIELD_TIME_MS,
} from './tool-limits.js';

/** Which optional parameters this session offers the model (the feature plan decides). */
export interface ExecCommandVariant {
  /** Offer `shell` (not in zsh-fork mode without remote environments). Default true. */
  shell?: boolean;
  /** Offer `login` (only when login shells are allowed by config). Default true. */
  login?: boolean;
  /** Offer `environment_id` (only when the session has more than one environment). Default false. */
  environmentId?: boolean;
  /** Offer `with_additional_permissions` and `additional_permissions` (feature `exec_permission_approvals`). Default false. */
  additionalPermissions?: boolean;
}

const nonNegativeInteger = (what: string) =>
  z
    .number()
    .int({ error: `${what} must be a whole number` })
    .min(0, `${what} must not be negative`);

// Built on first use: building zod schemas costs far more than validating with them, and a process
// that never validates a call (or only one variant) should not pay for every field at start-up.
let builtFields: ReturnType<typeof buildFields> | undefined;
const fields = () => {
  builtFields ??= buildFields();
  return builtFields;
};

const buildFields = () => ({
  cmd: z
    .string()
    .refine((cmd) => cmd.trim() !== '', 'must not be empty or only whitespace')
    .refine((cmd) => !cmd.includes('\0'), 'must not contain a NUL byte')
    .describe('The shell command to run.'),
  workdir: z
    .string()
    .refine((workdir) => !workdir.includes('\0'), 'must not contain a NUL byte')
    .describe(
      "Working directory for the command. Relative paths resolve against the session's directory; defaults to it.",
    ),
  shell: z
    .string()
    .min(1)
    .refine((shell) => !shell.includes('\0'), 'must not contain a NUL byte')
    .describe("Shell binary to run the command with. Defaults to the user's shell."),
  tty: z
    .boolean()
    .describe(
      'Give the command a pseudo-terminal, for interactive programs (REPLs, prompts, editors). Default false: plain pipes, no stdin.',
    ),
  login: z.boolean().describe("Run the shell as a login shell so the user's profile is loaded."),
  yield_time_ms: nonNegativeInteger('yield_time_ms').describe(
    `How long to wait before returning, in milliseconds (${MIN_YIELD_TIME_MS} to ${MAX_YIELD_TIME_MS}, default ${EXEC_COMMAND_DEFAULT_YIELD_TIME_MS}). A command still running by then keeps running and is returned with a session ID.`,
  ),
  max_output_tokens: nonNegativeInteger('max_output_tokens').describe(
    `Most output tokens to return (default ${DEFAULT_MAX_OUTPUT_TOKENS}); longer output keeps its beginning and end.`,
  ),
  justification: z
    .string()
    .describe('With require_escalated: the question shown to the user, saying why the command needs it.'),
  prefix_rule: z
    .array(z.string().min(1))
    .min(1)
    .describe(
      'With require_escalated: a command prefix such as ["git", "pull"] the user may approve for every later command that starts with it.',
    ),
  environment_id: z.string().min(1).describe('Which environment to run in, when the session has several.'),
  additional_permissions: additionalPermissionsSchema.describe(
    'With with_additional_permissions: the extra network or file-system access this command needs.',
  ),
});

function sandboxPermissionsField(additional: boolean) {
  const values = additional ? sandboxPermissionsValues : (['use_default', 'require_escalated'] as const);
  return z
    .enum(values)
    .describe(
      additional
        ? 'use_default runs inside the sandbox; require_escalated asks the user to run it outside the sandbox; with_additional_permissions asks to widen the sandbox by additional_permissions.'
        : 'use_default runs inside the sandbox; require_escalated asks the user to run it outside the sandbox.',
    );
}

const schemas = new Map<string, ReturnType<typeof buildExecCommandArgsSchema>>();

/**
 * The `exec_command` argument schema for a session's variant. The same schema validates and describes.
 * Schemas are built once per variant: building one costs far more than validating with it.
 */
export function createExecCommandArgsSchema(variant: ExecCommandVariant = {}) {
  const key = [
    variant.shell !== false,
    variant.login !== false,
    variant.environmentId === true,
    variant.additionalPermissions === true,
  ].join();
  let schema = schemas.get(key);
  if (!schema) {
    schema = buildExecCommandArgsSchema(variant);
    schemas.set(key, schema);
  }
  return schema;
}

function buildExecCommandArgsSchema(variant: ExecCommandVariant): z.ZodType<ExecCommandArgs> {
  const field: Record<string, z.ZodType> = {
    ...fields(),
    sandbox_permissions: sandboxPermissionsField(variant.additionalPermissions === true),
  };
  const shape = Object.fromEntries(
    execCommandParameters(variant).map((name) => [
      name,
      name === 'cmd' ? field.cmd : (field[name] as z.ZodType).optional(),
    ]),
  );
  const schema = z.strictObject(shape).superRefine((args, context) => {
    const record = args as Record<string, unknown>;
    const wantsAdditional = record.sandbox_permissions === 'with_additional_permissions';
    if (record.additional_permissions !== undefined && !wantsAdditional) {
      context.addIssue({
        code: 'custom',
        path: ['additional_permissions'],
        message: 'is only allowed with sandbox_permissions "with_additional_permissions"',
      });
    }
    if (wantsAdditional && record.additional_permissions === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['additional_permissions'],
        message: 'is required with sandbox_permissions "with_additional_permissions"',
      });
    }
  });
  // The shape is built from the parameter list, so its static type is a record; ExecCommandArgs is
  // what it accepts.
  return schema as unknown as z.ZodType<ExecCommandArgs>;
}

/** Every parameter the door understands. */
export const execCommandArgsSchema = z.lazy(() =>
  createExecCommandArgsSchema({
    shell: true,
    login: true,
    environmentId: true,
    additionalPermissions: true,
  }),
);

/** Arguments of `exec_command`, all optional parameters included. */
export interface ExecCommandArgs {
  cmd: string;
  workdir?: string;
  shell?: string;
  tty?: boolean;
  login?: boolean;
  yield_time_ms?: number;
  max_output_tokens?: number;
  environment_id?: string;
  sandbox_permissions?: 'use_default' | 'require_escalated' | 'with_additional_permissions';
  justification?: string;
  prefix_rule?: string[];
  additional_permissions?: z.output<typeof additionalPermissionsSchema>;
}
