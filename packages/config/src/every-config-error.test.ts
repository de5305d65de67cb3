import { describe, expect, it } from 'vitest';
import { applyConfigOverrides } from './apply-config-overrides.js';
import { parseConfigOverride } from './parse-config-override.js';
import { parseRequirements } from './requirements.js';
import { everyConfigError, parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';

const FIVE_MISTAKES = `sandbox_mode = "read-onyl"
approval_polcy = "never"
[features]
unified_exce = true
[sandbox_workspace_write]
network_acess = true
[zsh_fork]
zsh_path = "relative/zsh"
`;

describe('everyConfigError', () => {
  it('finds every mistake of a config.toml in one pass, each at its file:line', () => {
    const errors = everyConfigError(parseTomlDocument(FIVE_MISTAKES, FILE), parseUserConfig);
    expect(errors.map((error) => error.line)).toEqual([1, 2, 4, 6, 8]);
    for (const error of errors) expect(error.file).toBe(FILE);
    expect(errors.map((error) => error.message).join('\n')).toContain('approval_polcy');
    expect(errors.map((error) => error.message).join('\n')).toContain('unified_exce');
    expect(errors.map((error) => error.message).join('\n')).toContain('read-onyl');
    // The one the parser reports alone is among them.
    let alone = '';
    try {
      parseUserConfig(parseTomlDocument(FIVE_MISTAKES, FILE));
    } catch (error) {
      alone = (error as Error).message;
    }
    expect(errors.map((error) => error.message)).toContain(alone);
  });

  it('is empty for a good file, and leaves the document as it was', () => {
    const document = parseTomlDocument('sandbox_mode = "read-only"\n', FILE);
    expect(everyConfigError(document, parseUserConfig)).toEqual([]);
    const bad = parseTomlDocument(FIVE_MISTAKES, FILE);
    everyConfigError(bad, parseUserConfig);
    expect(bad.value.approval_polcy).toBe('never');
  });

  it('finds the mistakes of requirements and of -c overrides (located at the argument)', () => {
    const requirements = parseTomlDocument(
      'allowed_sandbox_modes = ["read-only", "nope"]\nallowed_approval_policies = "never"\nfoo = 1\n',
      REQ,
    );
    const errors = everyConfigError(requirements, parseRequirements);
    expect(errors.map((error) => error.line)).toEqual([1, 2, 3]);

    const base = parseTomlDocument('approval_polcy = "never"\n', FILE);
    const withOverride = applyConfigOverrides(base, [parseConfigOverride('sandbox_mode=read-onyl')], FILE);
    const both = everyConfigError(withOverride, parseUserConfig);
    expect(both).toHaveLength(2);
    expect(both.map((error) => error.file)).toEqual([FILE, '-c sandbox_mode=read-onyl']);
  });

  it('a table of the wrong type is one mistake, and the rest are still found', () => {
    const errors = everyConfigError(parseTomlDocument('profiles = 3\nfoo = 1\n', FILE), parseUserConfig);
    expect(errors.map((error) => error.line)).toEqual([1, 2]);
  });
});
