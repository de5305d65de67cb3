import { describe, expect, it } from 'vitest';
import { SANDBOX_SPECIFICATION_VERSION } from './sandbox-backend.js';
import { sandboxPluginProblem } from './sandbox-plugin.js';

const valid = {
  specificationVersion: SANDBOX_SPECIFICATION_VERSION,
  id: 'toy-box',
  platforms: ['linux'],
  create: () => {
    throw new Error('not created in these tests');
  },
};

describe('sandboxPluginProblem', () => {
  it('accepts a plugin with or without a Standard Schema for its settings', () => {
    expect(sandboxPluginProblem(valid)).toBeUndefined();
    const settings = {
      '~standard': { version: 1, vendor: 'toy', validate: (value: unknown) => ({ value }) },
    };
    expect(sandboxPluginProblem({ ...valid, settings })).toBeUndefined();
  });

  it('names a module that exports no object', () => {
    expect(sandboxPluginProblem(undefined)).toMatch(/exports no sandbox plugin object/);
    expect(sandboxPluginProblem(null)).toMatch(/exports no sandbox plugin object/);
    expect(sandboxPluginProblem(() => valid)).toMatch(/exports no sandbox plugin object/);
  });

  it('names a wrong specification version, with both versions', () => {
    expect(sandboxPluginProblem({ ...valid, specificationVersion: 'ux-sandbox-v0' })).toBe(
      `it speaks "ux-sandbox-v0", ux speaks "${SANDBOX_SPECIFICATION_VERSION}"`,
    );
  });

  it('names an id that is not a lowercase name', () => {
    for (const id of ['Toy', '1box', 'toy_box', '', undefined])
      expect(sandboxPluginProblem({ ...valid, id })).toMatch(/its id .* is not a lowercase name/);
  });

  it('names platforms that are not a list of names, and a missing create', () => {
    expect(sandboxPluginProblem({ ...valid, platforms: 'linux' })).toMatch(/platforms are not a list/);
    expect(sandboxPluginProblem({ ...valid, platforms: [1] })).toMatch(/platforms are not a list/);
    expect(sandboxPluginProblem({ ...valid, create: undefined })).toMatch(/no create\(settings, host\)/);
  });

  it('names a settings schema that is not a Standard Schema', () => {
    expect(sandboxPluginProblem({ ...valid, settings: { parse: () => ({}) } })).toMatch(
      /not a Standard Schema/,
    );
  });
});
