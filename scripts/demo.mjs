// The main job of `npm run main`: a short scripted session of `ux exec`, each call printed as a person
// would type it, followed by the receipt the model would read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ux = join(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'cli', 'dist', 'ux.js');
const workspace = mkdtempSync(join(tmpdir(), 'ux-demo-'));
const uxHome = mkdtempSync(join(tmpdir(), 'ux-demo-home-'));
const env = { ...process.env, UX_HOME: uxHome };

const steps = [
  ['Is this machine ready? (node-pty, bubblewrap, configuration)', ['doctor']],
  [
    'A sandboxed command: the workspace is writable, the network is off',
    [
      'exec',
      '--',
      'echo hello > note.txt && cat note.txt && (curl -sS -m 2 https://example.com || echo "no network")',
    ],
  ],
  ['A write outside the workspace is blocked; the receipt says so', ['exec', '--', 'touch /etc/ux-demo']],
  [
    'A command that outlives the first wait gets a session and is polled until it exits',
    ['exec', '--yield-ms', '500', '--', 'for i in 1 2 3; do echo "step $i"; sleep 0.7; done'],
  ],
];

let status = 0;
for (const [title, args] of steps) {
  process.stdout.write(
    `\n# ${title}\n$ ux ${args.map((a) => (/[\s'"$&|;()<>]/.test(a) ? `'${a}'` : a)).join(' ')}\n`,
  );
  const result = spawnSync(process.execPath, [ux, ...args], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // A blocked write is the point of step 3; anything else failing is a failure of the demo.
  if (result.status !== 0 && !args.includes('/etc/ux-demo')) status = result.status ?? 1;
}
rmSync(workspace, { recursive: true, force: true });
rmSync(uxHome, { recursive: true, force: true });
process.exit(status);
