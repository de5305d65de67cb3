// Shell snapshots kept across ux processes, through the built `ux exec`: the second run
// reuses the first one's snapshot, an edit of a login file (or of a file it sources) is picked up by
// the next run, and a sandboxed command can neither read, plant nor alter a cached snapshot.
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uxRuntimeRoot } from '@ux/protocol-utils';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const CACHE = join(uxRuntimeRoot(), 'shell-snapshot-cache');

/**
 * A HOME whose login files export a value that differs on every run of them (the login shell's pid and
 * bash's random numbers): a command that prints the same value twice got it from one run of them.
 */
function homeWithCountingRc(config?: string): UxHome {
  const home = makeHome(config === undefined ? {} : { config });
  writeFileSync(join(home.home, '.bash_profile'), '. "$HOME/.bashrc"\n');
  writeFileSync(join(home.home, '.bashrc'), 'export SNAP_ID="$$-$RANDOM$RANDOM"\n. ~/.extra\n');
  writeFileSync(join(home.home, '.extra'), 'export SNAP_EXTRA=one\n');
  return home;
}

async function printed(home: UxHome, command: string): Promise<string> {
  const result = await runUx(['exec', '--', 'sh', '-c', command], home);
  expect(result.status, result.stderr).toBe(0);
  // What the command printed: after the result's header (`Chunk ID`, `Wall time`, …, `Output:`).
  const at = result.stdout.indexOf('\nOutput:\n');
  expect(at, result.stdout).toBeGreaterThan(0);
  return result.stdout.slice(at + '\nOutput:\n'.length).trim();
}

/** Rewrites a file with a later mtime (certain to be seen on a coarse clock too). */
function edit(path: string, text: string): void {
  writeFileSync(path, text);
  const later = new Date(Date.now() + 5000);
  utimesSync(path, later, later);
}

describe('shell snapshots across ux processes', () => {
  it('a second ux exec reuses the first one’s snapshot; without snapshots the login files run each time', async () => {
    const home = homeWithCountingRc();
    const first = await printed(home, 'echo "$SNAP_ID"');
    expect(first).toMatch(/^\d+-\d+$/);
    expect(await printed(home, 'echo "$SNAP_ID"')).toBe(first);
    expect(await printed(home, 'echo "$SNAP_ID"')).toBe(first);

    // Control: the observable tells runs of the login files apart.
    const off = homeWithCountingRc('[features]\nshell_snapshot = false\n');
    const a = await printed(off, 'echo "$SNAP_ID"');
    const b = await printed(off, 'echo "$SNAP_ID"');
    expect(a).toMatch(/^\d+-\d+$/);
    expect(b).not.toBe(a);
  }, 60_000);

  it('picks up an edit of ~/.bashrc, and of a file it sources, on the next run', async () => {
    const home = homeWithCountingRc();
    const first = await printed(home, 'echo "$SNAP_ID $SNAP_EXTRA"');
    edit(join(home.home, '.bashrc'), 'export SNAP_ID="edited-$RANDOM$RANDOM"\n. ~/.extra\n');
    const second = await printed(home, 'echo "$SNAP_ID $SNAP_EXTRA"');
    expect(second).toMatch(/^edited-\d+ one$/);
    expect(second).not.toBe(first);
    expect(await printed(home, 'echo "$SNAP_ID $SNAP_EXTRA"')).toBe(second);

    edit(join(home.home, '.extra'), 'export SNAP_EXTRA=two\n');
    const third = await printed(home, 'echo "$SNAP_ID $SNAP_EXTRA"');
    expect(third).toMatch(/^edited-\d+ two$/);
    expect(third.split(' ')[0]).not.toBe(second.split(' ')[0]);
  }, 60_000);

  it('a sandboxed command cannot read, plant or alter a cached snapshot', async () => {
    const home = homeWithCountingRc();
    const first = await printed(home, 'echo "$SNAP_ID"');
    const entries = () => readdirSync(CACHE).filter((name) => name.endsWith('.snap'));
    // The entry exists on the host, where the attack aims.
    const before = new Map(entries().map((name) => [name, readFileSync(join(CACHE, name), 'latin1')]));
    const ours = [...before].filter(([, text]) => text.includes(home.home));
    expect(ours).toHaveLength(1);
    const canary = join(home.workspace, 'canary');
    const attack = [
      `for d in ${CACHE} /run/user/*/ux/shell-snapshot-cache /tmp/ux-*/shell-snapshot-cache; do`,
      '  ls -a "$d" 2>/dev/null && echo "listed $d"',
      '  for f in "$d"/*.snap; do',
      `    [ -e "$f" ] && { printf 'export SNAP_ID=planted\\ntouch ${canary}\\n' >> "$f" && echo "appended $f"; }`,
      '  done',
      `  mkdir -p "$d" 2>/dev/null && printf 'touch ${canary}\\n' > "$d/${ours[0]![0]}" 2>/dev/null && echo "planted in $d"`,
      'done; true',
    ].join('\n');
    const result = await runUx(['exec', '--', 'sh', '-c', attack], home);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(/listed|appended/);
    // Whatever it made, it made in its own view of the file system; the host's entries are as they were.
    for (const [name, text] of before) {
      if (existsSync(join(CACHE, name))) expect(readFileSync(join(CACHE, name), 'latin1')).toBe(text);
    }
    expect(await printed(home, 'echo "$SNAP_ID"')).toBe(first);
    expect(existsSync(canary)).toBe(false);
  }, 60_000);
});
