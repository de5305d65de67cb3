import type { ExecCommandVariant } from './exec-command.js';
import { execCommandParameters } from './exec-command-parameters.js';
import { TOOL_JSON_SCHEMAS } from './tool-json-schemas.js';

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
  /**
   * The session's environments, when `environment_id` is offered: the parameter then lists them (an
   * `enum`) and names the default, so a model can pick one without guessing.
   */
  environments?: { ids: readonly string[]; defaultId?: string };
}

const WINDOWS_NOTES =
  ' On Windows the default shell is PowerShell: join commands with `;`, quote paths that contain spaces, and never delete outside the working directory.';

// The JSON Schemas come from the zod schemas, generated ahead of time (tool-json-schemas.ts): a host
// lists its tools without loading a schema library, and tool-definitions.test.ts fails when the
// generated file no longer matches the zod schemas.

export function execCommandToolDefinition(options: ExecCommandToolOptions = {}): ToolDefinition {
  const { execCommand } = TOOL_JSON_SCHEMAS;
  const properties: Record<string, JsonSchema> = Object.fromEntries(
    execCommandParameters(options).map((name) => [
      name,
      name === 'sandbox_permissions' && !options.additionalPermissions
        ? execCommand.sandboxPermissionsWithoutAdditional
        : execCommand.properties[name as keyof typeof execCommand.properties],
    ]),
  );
  const environments = options.environments;
  if (options.environmentId && environments && environments.ids.length > 0) {
    properties.environment_id = environmentIdProperty(environments.ids, environments.defaultId);
  }
  return {
    name: 'exec_command',
    description: `Run a shell command. Returns its output once it exits, or, if it is still running after yield_time_ms, a session ID to pass to write_stdin to send input or read more output.${
      options.platform === 'win32' ? WINDOWS_NOTES : ''
    }`,
    parameters: structuredClone({
      type: 'object',
      properties,
      required: ['cmd'],
      additionalProperties: false,
    }),
    outputSchema: structuredClone(TOOL_JSON_SCHEMAS.execResult),
  };
}

function environmentIdProperty(ids: readonly string[], defaultId: string | undefined): JsonSchema {
  const listed = ids.length === 1 ? ids[0] : `${ids.slice(0, -1).join(', ')} or ${ids.at(-1)}`;
  return {
    type: 'string',
    enum: [...ids],
    description: `Which environment to run in: ${listed}.${
      defaultId === undefined ? ' Required: this session has no default.' : ` Default: ${defaultId}.`
    }`,
  };
}

export function writeStdinToolDefinition(): ToolDefinition {
  return {
    name: 'write_stdin',
    description:
      'Write characters to a running exec_command session and return its recent output. Empty chars only polls for output.',
    parameters: structuredClone(TOOL_JSON_SCHEMAS.writeStdin),
    outputSchema: structuredClone(TOOL_JSON_SCHEMAS.execResult),
  };
}

export function shellCommandToolDefinition(): ToolDefinition {
  return {
    name: 'shell_command',
    description: 'Run a shell command to completion and return its exit code and output.',
    parameters: structuredClone(TOOL_JSON_SCHEMAS.shellCommand),
  };
}
