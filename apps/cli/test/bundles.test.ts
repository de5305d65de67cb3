import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Start-up time is the budget of a short command (bench/cli). These guard what the build keeps out of
// the command bundles; the reasons are in tsup.config.ts and docs/cli.md.
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const bundle = (name: string) => readFileSync(join(dist, `${name}.cjs`), 'utf8');

describe('the command bundles', () => {
  it.each(['exec-command', 'sandbox-command', 'doctor-command', 'features-command', 'mcp-command'])(
    '%s carries no schema library and loads the protocol schemas only on demand',
    (name) => {
      const code = bundle(name);
      expect(code).not.toContain('_zod');
      expect(code).not.toMatch(/require\("@ux\/protocol"\)/);
    },
  );

  it('keep the exec-server wire schemas out of ux exec, and the macOS and Windows backends out of both', () => {
    // Each marker is in the code it stands for: the exec-server bundle, and the backends' packages.
    expect(bundle('exec-server-command')).toContain('fs/readDirectory');
    expect(bundle('exec-command')).not.toContain('fs/readDirectory');
    for (const name of ['exec-command', 'sandbox-command']) {
      expect(bundle(name)).not.toContain('/usr/bin/sandbox-exec');
      expect(bundle(name)).not.toContain('CreateRestrictedToken');
      expect(bundle(name)).toContain('import("@ux/sandbox-seatbelt")');
      expect(bundle(name)).toContain('import("@ux/sandbox-windows-token")');
    }
  });

  it('are CommonJS, required by ux.cjs without the ES module loader', () => {
    expect(bundle('ux')).toContain('require("./exec-command.cjs")');
    expect(bundle('ux')).not.toMatch(/import\("\.\/[a-z-]+\.c?js"\)/);
  });
});
