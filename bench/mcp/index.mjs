// bench/mcp: a `true` round trip through the shipped `ux mcp`, against a raw bubblewrap `true`, in one run.
//   mcp.true_ms            exec_command {cmd: "true"} through `ux mcp` (apps/cli/dist/ux.cjs, default
//                          config: workspace-write, bubblewrap on, login shell from the session's
//                          snapshot), driven by the official MCP SDK client; median (target <= 15 ms)
//   mcp.raw_bwrap_true_ms  `bwrap … /bin/true` spawned raw (a read-only root, fresh /dev, /proc and
//                          /tmp, every namespace unshared): what a sandboxed command costs at least
//   mcp.true.vs_raw_bwrap  the ratio of the two
// Set MCP_BENCH_ARGS to pass options to `ux mcp` (e.g. "--sandbox danger-full-access").
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, report, timeMs } from '../lib/report.mjs';
import { loadMcpClient, makeUxHome, UX_BIN } from '../lib/ux-cli.mjs';

closeInheritedFds();
const BIN = UX_BIN;
const { Client, StdioClientTransport } = await loadMcpClient();
const { home, workspace, env } = makeUxHome('ux-bench-mcp-');
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [BIN, 'mcp', ...(process.env.MCP_BENCH_ARGS?.split(' ').filter(Boolean) ?? [])],
  cwd: workspace,
  env,
  stderr: 'pipe',
});
const client = new Client({ name: 'ux-bench', version: '1.0.0' }, { capabilities: {} });
await client.connect(transport);

const mcpTrue = () =>
  timeMs(async () => {
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd: 'true' } });
    const text = result.content?.[0]?.text ?? '';
    if (result.isError || !text.includes('Process exited with code 0')) throw new Error(text);
  });
const BWRAP = [
  '--unshare-all',
  '--die-with-parent',
  '--new-session',
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--tmpfs',
  '/tmp',
  '--chdir',
  workspace,
  '--',
  '/bin/true',
];
const rawBwrap = () =>
  timeMs(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn('bwrap', BWRAP, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`bwrap exited ${code}`))));
      }),
  );

const rounds = Number(process.env.MCP_BENCH_ROUNDS ?? 100);
const times = await alternate({ subject: mcpTrue, baseline: rawBwrap, rounds, warmup: 10 });
report('mcp.true_ms', times.subject, 'ms', '<=15');
report('mcp.raw_bwrap_true_ms', times.baseline, 'ms');
report('mcp.true.vs_raw_bwrap', times.subject / times.baseline, 'x');

await client.close();
rmSync(home, { recursive: true, force: true });
process.exit(0);
