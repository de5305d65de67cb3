// bench/repositories: what the session-start scan for nested repositories costs. Every
// session walks its writable roots once (`findRepositories`, bounded, links not followed, node_modules
// skipped) so that nested repositories' configuration and hooks are protected like the workspace's.
//   repositories.<tree>.scan_ms     median time of the scan
//   repositories.<tree>.find_ms     `find ROOT -name .git -prune` over the same tree: the baseline
//   repositories.<tree>.ratio       scan vs find (informational: find is the obvious tool for the job)
//   repositories.<tree>.directories how many directories the scan read, and whether it hit the budget
// Trees: this checkout (with its node_modules, which the scan skips), the same with nothing skipped
// (what the budget bounds), and a synthetic 20 000-directory tree holding 50 repositories.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findRepositories } from '@ux/protocol-utils';
import { alternate, report, timeMs } from '../lib/report.mjs';

const checkout = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const synthetic = mkdtempSync(join(tmpdir(), 'ux-bench-repos-'));
// 20 × 20 × 50 = 20 000 directories, a repository in every eighth of the second level.
for (let a = 0; a < 20; a++)
  for (let b = 0; b < 20; b++) {
    const dir = join(synthetic, `a${a}`, `b${b}`);
    for (let c = 0; c < 50; c++) mkdirSync(join(dir, `c${c}`), { recursive: true });
    if ((a * 20 + b) % 8 === 0) mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
  }

const trees = [
  ['checkout', checkout, {}],
  ['checkout_unskipped', checkout, { skip: [] }],
  ['synthetic_20k', synthetic, {}],
];
try {
  for (const [name, root, options] of trees) {
    const found = findRepositories([root], options);
    const { subject, baseline } = await alternate({
      warmup: 2,
      rounds: 15,
      subject: () => timeMs(() => findRepositories([root], options)),
      baseline: () =>
        timeMs(() => {
          const args = [
            root,
            ...(options.skip?.length === 0 ? [] : ['-name', 'node_modules', '-prune', '-o']),
            '-name',
            '.git',
            '-prune',
            '-print',
          ];
          spawnSync('find', args, { stdio: 'ignore' });
        }),
    });
    report(`repositories.${name}.scan_ms`, subject, 'ms');
    report(`repositories.${name}.find_ms`, baseline, 'ms');
    report(`repositories.${name}.ratio`, subject / baseline, 'x');
    report(
      `repositories.${name}.directories`,
      found.directories,
      `dirs, ${found.repositories.length} repositories${found.truncated ? ', budget reached' : ''}`,
    );
  }
} finally {
  rmSync(synthetic, { recursive: true, force: true });
}
