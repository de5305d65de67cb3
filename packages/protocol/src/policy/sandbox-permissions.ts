import * as z from 'zod/v4';

/**
 * What one `exec_command` asks of the sandbox: the default, to run outside it (needs approval under
 * `on-request`), or to run inside it with extra permissions.
 */
export const sandboxPermissionsValues = [
  'use_default',
  'require_escalated',
  'with_additional_permissions',
] as const;
export const sandboxPermissionsSchema = z.enum(sandboxPermissionsValues);
export type SandboxPermissions = z.output<typeof sandboxPermissionsSchema>;

/** Extra sandboxed permissions for one command (`sandbox_permissions: "with_additional_permissions"`). */
export const additionalPermissionsSchema = z.lazy(() =>
  z.strictObject({
    network: z
      .strictObject({
        enabled: z.boolean().optional().describe('Allow network access for this command.'),
      })
      .optional(),
    file_system: z
      .strictObject({
        read: z
          .array(z.string().min(1))
          .optional()
          .describe('Extra paths to read (relative to workdir or absolute).'),
        write: z
          .array(z.string().min(1))
          .optional()
          .describe('Extra paths to write (relative to workdir or absolute).'),
      })
      .optional(),
  }),
);
export type AdditionalPermissions = z.output<typeof additionalPermissionsSchema>;
