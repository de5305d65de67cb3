import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapFeatures } from './probe-bwrap.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A stand-in bwrap that is killed by `signal` on its first `count` runs, then answers. */
function flakyBwrap(signal: string, count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'ux-probe-'));
  dirs.push(dir);
  const file = join(dir, 'bwrap');
  writeFileSync(
    file,
    `#!/bin/sh
n=$(cat "${dir}/runs-$1" 2>/dev/null || echo 0)
echo $((n + 1)) > "${dir}/runs-$1"
if [ "$n" -lt ${count} ]; then kill -${signal} $$; sleep 5; fi
case $1 in --version) echo "bubblewrap 0.9.0" ;; --help) echo "  --disable-userns  --argv0" ;; esac
`,
  );
  chmodSync(file, 0o755);
  return file;
}

describe('bwrapFeatures', () => {
  it('runs a probe again when a Ctrl-C meant for someone else killed it', async () => {
    const features = await bwrapFeatures(flakyBwrap('INT', 1));
    expect(features).toEqual({ version: '0.9.0', disableUserns: true, argv0: true });
  });

  it('gives up after three interrupted runs and says what killed it', async () => {
    const features = await bwrapFeatures(flakyBwrap('INT', 3));
    expect(features).toEqual({ reason: expect.stringContaining('--version failed: killed by SIGINT') });
  });

  it('reports a missing program with the reason, not an empty message', async () => {
    const features = await bwrapFeatures('/nonexistent/bwrap');
    expect(features).toEqual({ reason: expect.stringMatching(/--version failed: .*ENOENT/) });
  });
});
