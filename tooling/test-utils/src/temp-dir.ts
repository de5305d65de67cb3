import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * A fresh directory (symlinks resolved) removed when the current test finishes; under `parent` (default
 * the system's temporary directory).
 */
export function tempDir(prefix = 'ux-test-', parent: string = tmpdir()): string {
  const dir = realpathSync(mkdtempSync(join(parent, prefix)));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
