import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * `apply_patch` and `applypatch` for the commands' PATH: scripts in `$UX_HOME/bin` that run
 * `ux apply-patch`, so a script that calls apply_patch works too (inside the sandbox, whose rules its
 * writes then follow). A model's own `apply_patch <<'EOF'` never gets there: the door intercepts it.
 */
export function applyPatchBin(binDir: string): string[] {
  const ux = process.argv[1];
  if (!ux) return [];
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const script = `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(realpathSync(ux))} apply-patch "$@"\n`;
  try {
    mkdirSync(binDir, { recursive: true, mode: 0o755 });
    for (const name of ['apply_patch', 'applypatch']) {
      const target = join(binDir, name);
      if (existsSync(target) && readFileSync(target, 'utf8') === script) continue;
      const temporary = `${target}.${process.pid}`;
      writeFileSync(temporary, script, { mode: 0o755 });
      renameSync(temporary, target);
    }
  } catch {
    // Without it, only scripts that call apply_patch lose it; the model's own calls still work.
    return [];
  }
  return [binDir];
}

/**
 * What the `apply_patch` scripts run, for `hostPaths`: Node and the CLI's own directory (`ux.cjs` and
 * the command bundle it loads). Shown read-only inside every sandbox, so a script that calls
 * apply_patch works even where the sandbox hides their place (ux installed under /tmp, with the
 * session's private /tmp).
 */
export function applyPatchBinNeeds(): string[] {
  const ux = process.argv[1];
  if (!ux) return [];
  try {
    return [process.execPath, dirname(realpathSync(ux))];
  } catch {
    return [];
  }
}
