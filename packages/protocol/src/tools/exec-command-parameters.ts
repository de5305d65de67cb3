import type { ExecCommandVariant } from './exec-command.js';

/**
 * The `exec_command` parameters a session's variant offers, in the order the model sees them. The zod
 * schema, the JSON Schema and the quick check all follow this one list.
 */
export function execCommandParameters(variant: ExecCommandVariant = {}): string[] {
  return [
    'cmd',
    'workdir',
    ...(variant.shell === false ? [] : ['shell']),
    'tty',
    ...(variant.login === false ? [] : ['login']),
    'yield_time_ms',
    'max_output_tokens',
    ...(variant.environmentId ? ['environment_id'] : []),
    'sandbox_permissions',
    'justification',
    'prefix_rule',
    ...(variant.additionalPermissions ? ['additional_permissions'] : []),
  ];
}
