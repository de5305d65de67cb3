import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CodeCacheState, loadCommandBundle } from '../src/command-bundle.js';

// Start-up time is the budget of a short command (bench/cli). These guard what the build keeps out of
// the command bundles; the reasons are in tsup.config.ts and docs/cli.md.
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const bundle = (name: string) => readFileSync(join(dist, `${name}.cjs`), 'utf8');
const COMMANDS = readdirSync(dist)
  .filter((file) => file.endsWith('-command.cjs'))
  .map((file) => file.slice(0, -'.cjs'.length));

describe('the command bundles', () => {
  it.each(['exec-command', 'sandbox-command', 'doctor-command', 'features-command', 'mcp-command'])(
    '%s carries no schema library and loads the protocol schemas only on demand',
    (name) => {
      const code = bundle(name);
      expect(code).not.toContain('_zod');
      // Every require of the protocol's main entry is the deferred one an `import()` became.
      const all = code.match(/require\("@ux\/protocol"\)/g)?.length ?? 0;
      const deferred = code.match(/then\(\(\)=>__toESM\(require\("@ux\/protocol"\)/g)?.length ?? 0;
      expect(deferred).toBe(all);
    },
  );

  it('keep the exec-server wire schemas out of ux exec, and the macOS and Windows backends out of both', () => {
    // Each marker is in the code it stands for: the exec-server bundle, and the backends' packages.
    expect(bundle('exec-server-command')).toContain('fs/readDirectory');
    expect(bundle('exec-command')).not.toContain('fs/readDirectory');
    for (const name of ['exec-command', 'sandbox-command']) {
      expect(bundle(name)).not.toContain('/usr/bin/sandbox-exec');
      expect(bundle(name)).not.toContain('CreateRestrictedToken');
      // Their small plugin modules are bundled; each creates its backend from its package, by name.
      expect(bundle(name)).toMatch(
        /then\(\(\)=>__toESM\(require\(SELF\d*\)\)\)\)\.createSeatbeltSandbox\(\)/,
      );
      expect(bundle(name)).toMatch(
        /then\(\(\)=>__toESM\(require\(SELF\d*\)\)\)\)\.createWindowsTokenSandbox\(\)/,
      );
      expect(bundle(name)).toMatch(/SELF\d*="@ux\/sandbox-seatbelt"/);
      expect(bundle(name)).toMatch(/SELF\d*="@ux\/sandbox-windows-token"/);
    }
  });

  it('are CommonJS, loaded by ux.cjs without the ES module loader', () => {
    expect(bundle('ux')).toContain('"exec-command"');
    expect(bundle('ux')).not.toMatch(/import\("\.\/[a-z-]+\.c?js"\)/);
  });

  it.each(COMMANDS)('%s has no import(), which its vm.Script could not run (command-bundle.ts)', (name) => {
    expect(bundle(name)).not.toMatch(/\bimport\(/);
  });

  it.each(COMMANDS)('%s has a code cache this Node accepts', (name) => {
    let state: CodeCacheState | undefined;
    loadCommandBundle(join(dist, `${name}.cjs`), (found) => {
      state = found;
    });
    expect(state).toBe('used');
  });

  it('reach ES-module-only packages through require, which this Node allows', () => {
    const require = createRequire(join(dist, 'exec-command.cjs'));
    for (const name of [
      '@ux/protocol',
      '@ux/sandbox-seatbelt',
      '@ux/sandbox-windows-token',
      'web-tree-sitter',
    ])
      expect(Object.keys(require(name) as object).length).toBeGreaterThan(0);
  });
});
