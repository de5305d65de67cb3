import { describe, expect, it } from 'vitest';
import { createExecCommandArgsSchema } from './exec-command.js';
import { execResultSchema } from './exec-result.js';
import { shellCommandArgsSchema } from './shell-command.js';
import { toJsonSchema } from './to-json-schema.js';
import {
  execCommandToolDefinition,
  shellCommandToolDefinition,
  writeStdinToolDefinition,
} from './tool-definitions.js';
import { writeStdinArgsSchema } from './write-stdin.js';

type Schema = {
  properties: Record<string, { description?: string; enum?: string[]; type?: string }>;
  required: string[];
};

describe('tool definitions', () => {
  it('describes exec_command with cmd required and no extra keys allowed', () => {
    const tool = execCommandToolDefinition();
    expect(tool.name).toBe('exec_command');
    expect(tool.parameters).toMatchObject({ type: 'object', required: ['cmd'], additionalProperties: false });
    expect(tool.parameters).not.toHaveProperty('$schema');
    const schema = tool.parameters as Schema;
    expect(Object.keys(schema.properties)).toEqual([
      'cmd',
      'workdir',
      'shell',
      'tty',
      'login',
      'yield_time_ms',
      'max_output_tokens',
      'sandbox_permissions',
      'justification',
      'prefix_rule',
    ]);
    for (const [name, property] of Object.entries(schema.properties)) {
      expect(property.description, `${name} has a description`).toMatch(/\S/);
    }
    expect(schema.properties.sandbox_permissions?.enum).toEqual(['use_default', 'require_escalated']);
    expect(schema.properties.yield_time_ms).toMatchObject({ type: 'integer', minimum: 0 });
    expect(schema.properties.yield_time_ms).not.toHaveProperty('maximum');
  });

  it('lists the environments of the session and names the default, so a model need not guess', () => {
    const listed = execCommandToolDefinition({
      environmentId: true,
      environments: { ids: ['local', 'box', 'dev'], defaultId: 'dev' },
    }).parameters as Schema;
    expect(listed.properties.environment_id).toEqual({
      type: 'string',
      enum: ['local', 'box', 'dev'],
      description: 'Which environment to run in: local, box or dev. Default: dev.',
    });
    const noDefault = execCommandToolDefinition({
      environmentId: true,
      environments: { ids: ['box', 'dev'] },
    }).parameters as Schema;
    expect(noDefault.properties.environment_id?.description).toBe(
      'Which environment to run in: box or dev. Required: this session has no default.',
    );
    const notOffered = execCommandToolDefinition({
      environments: { ids: ['local', 'box'], defaultId: 'local' },
    }).parameters as Schema;
    expect(notOffered.properties).not.toHaveProperty('environment_id');
  });

  it('offers exactly the parameters of the variant', () => {
    const zshFork = execCommandToolDefinition({ shell: false, login: false }).parameters as Schema;
    expect(zshFork.properties).not.toHaveProperty('shell');
    expect(zshFork.properties).not.toHaveProperty('login');
    const full = execCommandToolDefinition({ environmentId: true, additionalPermissions: true })
      .parameters as Schema;
    expect(full.properties).toHaveProperty('environment_id');
    expect(full.properties).toHaveProperty('additional_permissions');
    expect(full.properties.sandbox_permissions?.enum).toEqual([
      'use_default',
      'require_escalated',
      'with_additional_permissions',
    ]);
    expect(full.properties.additional_permissions).toMatchObject({
      type: 'object',
      additionalProperties: false,
    });
  });

  it('adds the Windows notes only on Windows', () => {
    expect(execCommandToolDefinition({ platform: 'win32' }).description).toContain('PowerShell');
    expect(execCommandToolDefinition({ platform: 'linux' }).description).not.toContain('PowerShell');
  });

  it('describes write_stdin with session_id required', () => {
    const tool = writeStdinToolDefinition();
    expect(tool.parameters).toMatchObject({
      type: 'object',
      required: ['session_id'],
      additionalProperties: false,
      properties: {
        session_id: { type: 'integer', minimum: 0, maximum: 2147483647 },
        chars: { type: 'string' },
      },
    });
  });

  it('declares the structured result (version 1) with its version, status, wall time and output required', () => {
    expect(execCommandToolDefinition().outputSchema).toMatchObject({
      type: 'object',
      required: ['result_version', 'status', 'wall_time_seconds', 'output'],
      properties: {
        result_version: { const: 1 },
        status: { enum: ['exited', 'running', 'refused', 'failed', 'interrupted'] },
        chunk_id: { type: 'string' },
        wall_time_seconds: { type: 'number' },
        exit_code: { type: 'integer' },
        session_id: { type: 'integer' },
        original_token_count: { type: 'integer' },
        output: { type: 'string' },
      },
    });
  });

  it('describes the standalone shell_command tool', () => {
    expect(shellCommandToolDefinition().parameters).toMatchObject({
      required: ['command'],
      additionalProperties: false,
      properties: {
        command: { type: 'string' },
        workdir: { type: 'string' },
        timeout_ms: { type: 'integer' },
      },
    });
  });
});

describe('the generated JSON Schemas (tool-json-schemas.ts)', () => {
  const stale = 'stale: run `pnpm --filter @ux/protocol generate`';
  const flags = [false, true];
  const variants = flags.flatMap((shell) =>
    flags.flatMap((login) =>
      flags.flatMap((environmentId) =>
        flags.map((additionalPermissions) => ({ shell, login, environmentId, additionalPermissions })),
      ),
    ),
  );

  it.each(variants)('match the zod schema of exec_command for %j, byte for byte', (variant) => {
    const generated = execCommandToolDefinition(variant);
    expect(JSON.stringify(generated.parameters), stale).toBe(
      JSON.stringify(toJsonSchema(createExecCommandArgsSchema(variant), 'input')),
    );
    expect(JSON.stringify(generated.outputSchema), stale).toBe(
      JSON.stringify(toJsonSchema(execResultSchema, 'output')),
    );
  });

  it('match the zod schemas of write_stdin and shell_command', () => {
    expect(JSON.stringify(writeStdinToolDefinition().parameters), stale).toBe(
      JSON.stringify(toJsonSchema(writeStdinArgsSchema, 'input')),
    );
    expect(JSON.stringify(shellCommandToolDefinition().parameters), stale).toBe(
      JSON.stringify(toJsonSchema(shellCommandArgsSchema, 'input')),
    );
  });

  it('hand out a fresh copy on every call', () => {
    const first = execCommandToolDefinition();
    (first.parameters.properties as Record<string, unknown>).cmd = 'changed';
    expect((execCommandToolDefinition().parameters.properties as Record<string, unknown>).cmd).not.toBe(
      'changed',
    );
  });
});
