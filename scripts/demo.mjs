// The main job of `npm run main`: a short scripted session of `ux exec`, each call printed as a person
// would type it, followed by the receipt the model would read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ux = join(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'cli', 'dist', 'ux.cjs');
const workspace = mkdtempSync(join(tmpdir(), 'ux-demo-'));
const uxHome = mkdtempSync(join(tmpdir(), 'ux-demo-home-'));
const env = { ...process.env, UX_HOME: uxHome };

// Title, arguments of ux, and the exit code the step should give (the blocked write fails, as it must).
const steps = [
  ['Is this machine ready? (node-pty, bubblewrap, configuration)', ['doctor'], 0],
  [
    'A sandboxed command: the workspace is writable, the network is off',
    [
      'exec',
      '--',
      'echo hello > note.txt && cat note.txt && (curl -sS -m 2 https://example.com || echo "no network")',
    ],
    0,
  ],
  ['A write outside the workspace is blocked; the receipt says so', ['exec', '--', 'touch /etc/ux-demo'], 1],
  [
    'A command that outlives the first wait gets a session and is polled until it exits',
    ['exec', '--yield-ms', '500', '--', 'for i in 1 2 3; do echo "step $i"; sleep 0.7; done'],
    0,
  ],
];

let status = 0;
for (const [title, args, expected] of steps) {
  process.stdout.write(
    `\n# ${title}\n$ ux ${args.map((a) => (/[\s'"$&|;()<>]/.test(a) ? `'${a}'` : a)).join(' ')}\n`,
  );
  const result = spawnSync(process.execPath, [ux, ...args], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== expected) {
    process.stderr.write(`demo: expected exit code ${expected}, got ${result.status}\n`);
    status = 1;
  }
}
rmSync(workspace, { recursive: true, force: true });
rmSync(uxHome, { recursive: true, force: true });
process.exit(status);
