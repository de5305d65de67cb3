// Soak (not a CI test): SOAK_CALLS (default 2,000) mixed tool calls through ONE shipped
// `ux mcp --allow-domain allowed.test` (apps/cli/dist/ux.cjs; default sandbox, bubblewrap on; the zsh
// fork composed with exec_command, the patched zsh from ~/.cache/ux/zsh-fork), driven by the official
// MCP SDK client with SOAK_CLIENTS (default 8) concurrent callers.
//
// `ux mcp` serves MCP over stdio only (one client per process: there is no HTTP or socket transport),
// so the 8 clients are 8 concurrent callers sharing the one stdio session of one SDK `Client`: up to 8
// requests in flight at every moment, answered in any order, which is what one agent running parallel
// tool calls does to the server.
//
// The mix (each a sequence of 1–3 calls; every call counts towards SOAK_CALLS):
//   pipe     exec_command, pipes                       net      curl through the proxy to a local server
//   fork     several programs (each intercepted)       tty      exec_command with a terminal
//   poll     running, then write_stdin polls           stdin    a terminal that reads a line written to it
//   ctrlc    a terminal `sleep 30`, then "\u0003"       patch    apply_patch (the door applies it)
//
// Figures (`BENCH soak.<figure> …`): hangs (a call still unanswered after SOAK_DEADLINE_MS, default
// 20 s), lost answers (never answered, even at shutdown), wrong answers, leaked processes (sessions
// left among the server's children after the last call; anything of this home alive after the server
// exited), leaked fds (/proc/<server>/fd after the warm-up and after the run), RSS growth, per-call
// median and p99.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ensureZshForkCache } from '@ux/zsh-fork';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { median, report } from '../lib/report.mjs';
import { loadMcpClient, makeUxHome, UX_BIN } from '../lib/ux-cli.mjs';

closeInheritedFds();
const BIN = UX_BIN;
const { Client, StdioClientTransport } = await loadMcpClient();

const CALLS = Number(process.env.SOAK_CALLS ?? 2000);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
const DEADLINE_MS = Number(process.env.SOAK_DEADLINE_MS ?? 20_000);
const WARMUP_CALLS = Number(process.env.SOAK_WARMUP ?? 48);
const KINDS = (process.env.SOAK_KINDS ?? 'pipe,fork,net,tty,poll,stdin,ctrlc,patch').split(',');
/** SOAK_ZSH_FORK=0: the plain door (bash), no zsh fork. */
const ZSH_FORK = process.env.SOAK_ZSH_FORK !== '0';
/** SOAK_LOAD=1: one busy loop per core beside the run. */
const LOAD = process.env.SOAK_LOAD === '1';

if (!existsSync(BIN)) {
  console.error(`bench soak: ${BIN} is missing; run pnpm --filter @ux/cli build first`);
  process.exit(1);
}
const { zshPath } = await ensureZshForkCache();

// ---------------------------------------------------------------------------------------------------
// The home, the destination server.
const { home, workspace, env } = makeUxHome('ux-soak-', { tmp: true, proxyHosts: 'allowed.test=127.0.0.1' });
mkdirSync(join(workspace, 'patches'));
writeFileSync(
  join(home, 'config.toml'),
  ZSH_FORK
    ? `[features]\nshell_zsh_fork = true\nunified_exec_zsh_fork = true\n[zsh_fork]\nzsh_path = "${zshPath}"\n`
    : '',
);

const served = new Set();
const http = createServer((request, response) => {
  served.add(request.url);
  response.end(`hello from ${request.headers.host} ${request.url}\n`);
});
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const port = http.address().port;

// ---------------------------------------------------------------------------------------------------
// /proc helpers.
function processTable() {
  const table = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), { ppid: Number(fields[1]), state: fields[0] });
    } catch {
      // It ended while we looked.
    }
  }
  return table;
}
function descendants(pid) {
  const table = processTable();
  const found = [];
  const walk = (parent) => {
    for (const [child, { ppid }] of table) {
      if (ppid !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}
const commandLine = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
};
/** Every process (but this one) that names this home in its command line or environment. */
function ofThisHome() {
  const found = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(home) ||
        readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`UX_HOME=${home}`)
      )
        found.push(pid);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}
const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length;
const rssMib = (pid) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

// ---------------------------------------------------------------------------------------------------
// The server and its client.
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [BIN, 'mcp', '--allow-domain', 'allowed.test'],
  cwd: workspace,
  env,
  stderr: 'pipe',
});
const stderr = [];
transport.stderr.on('data', (chunk) => stderr.push(String(chunk)));
const client = new Client({ name: 'ux-soak', version: '1.0.0' }, { capabilities: {} });
await client.connect(transport);
const server = transport.pid;

let issued = 0;
const latencies = [];
const byKind = new Map();
const failures = { hangs: 0, lost: 0, wrong: 0, errors: 0 };
const problems = [];
const open = new Map(); // call number → what it was, for the lost ones
let measuring = false;

/** One tools/call; its time, and a hang when it outlives the deadline (it is still waited for). */
async function call(kind, name, args, signal) {
  const number = ++issued;
  const what = `${kind} #${number} ${name} ${JSON.stringify(args).slice(0, 120)}`;
  open.set(number, what);
  const start = performance.now();
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    if (measuring) failures.hangs++;
    problems.push(`HANG ${what}`);
  }, DEADLINE_MS);
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: 24 * 3600 * 1000,
      ...(signal ? { signal } : {}),
    });
    const ms = performance.now() - start;
    if (measuring && !hung) {
      latencies.push(ms);
      if (!byKind.has(kind)) byKind.set(kind, []);
      byKind.get(kind).push(ms);
    }
    const structured = result.structuredContent ?? {};
    return { ...structured, text: (result.content ?? []).map((part) => part.text).join('') };
  } catch (error) {
    if (signal?.aborted) return { status: 'cancelled', text: '' };
    if (measuring) failures.errors++;
    problems.push(`ERROR ${what}: ${error.message}`);
    return { status: 'error', text: String(error.message) };
  } finally {
    clearTimeout(timer);
    open.delete(number);
  }
}

function expect(ok, kind, detail) {
  if (ok) return;
  if (measuring) failures.wrong++;
  problems.push(`WRONG ${kind}: ${detail.slice(0, 400)}`);
}

/** Polls a running session until its process exits; returns all the output seen. */
async function pollToExit(kind, first, chars) {
  let text = first.text;
  let last = first;
  const writes = chars === undefined ? [] : [chars];
  for (let round = 0; last.status === 'running' && round < 20; round++) {
    const next = writes.shift();
    last = await call(kind, 'write_stdin', {
      session_id: last.session_id ?? first.session_id,
      chars: next ?? '',
      yield_time_ms: next === undefined ? 5000 : 1000,
    });
    text += last.text;
  }
  return { last, text };
}

const mix = {
  async pipe(n) {
    const r = await call('pipe', 'exec_command', { cmd: `echo pipe-${n}` });
    expect(r.status === 'exited' && r.exit_code === 0 && r.text.includes(`pipe-${n}`), 'pipe', r.text);
  },
  async fork(n) {
    const r = await call('fork', 'exec_command', {
      cmd: `/bin/true; P=echo; $P fork-${n} | tr a-z A-Z; ls -d . >/dev/null`,
    });
    expect(r.exit_code === 0 && r.text.includes(`FORK-${n}`), 'fork', r.text);
  },
  async net(n) {
    const r = await call('net', 'exec_command', {
      cmd: `curl -sS --max-time 10 http://allowed.test:${port}/n${n}`,
    });
    expect(
      r.exit_code === 0 && r.text.includes(`hello from allowed.test:${port} /n${n}`) && served.has(`/n${n}`),
      'net',
      r.text,
    );
  },
  async tty(n) {
    const r = await call('tty', 'exec_command', {
      cmd: `printf 'tty-%s\\n' ${n}; test -t 1 && echo is-a-tty`,
      tty: true,
    });
    expect(r.exit_code === 0 && r.text.includes(`tty-${n}`) && r.text.includes('is-a-tty'), 'tty', r.text);
  },
  async poll(n) {
    const first = await call('poll', 'exec_command', {
      cmd: `sleep 0.5; echo polled-${n}`,
      yield_time_ms: 250,
    });
    const { last, text } = await pollToExit('poll', first);
    expect(last.status === 'exited' && text.includes(`polled-${n}`), 'poll', text);
  },
  async stdin(n) {
    const first = await call('stdin', 'exec_command', {
      cmd: `read x; echo "got-$x"`,
      tty: true,
      yield_time_ms: 250,
    });
    const { last, text } = await pollToExit('stdin', first, `v${n}\n`);
    expect(last.status === 'exited' && text.includes(`got-v${n}`), 'stdin', text);
  },
  // Ctrl-C: typed into a terminal, or SIGINT to the process group of a command on pipes.
  async ctrlc(n) {
    const first = await call('ctrlc', 'exec_command', {
      cmd: `echo ready-${n}; sleep 30; echo not-interrupted`,
      tty: n % 2 === 0,
      yield_time_ms: 250,
    });
    const { last, text } = await pollToExit('ctrlc', first, '\u0003');
    expect(last.status === 'exited' && !text.includes('not-interrupted'), 'ctrlc', `${last.status} ${text}`);
  },
  // Not in the default mix: a call the client cancels (MCP notifications/cancelled) soon after
  // sending it; the server stops waiting and keeps the process, which ends by itself.
  async cancel(n) {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), n % 40);
    const r = await call('cancel', 'exec_command', { cmd: `sleep 1; echo cancel-${n}` }, abort.signal);
    expect(r.status === 'cancelled' || r.text.includes(`cancel-${n}`), 'cancel', r.text);
  },
  // Not in the default mix: 1 MiB of output, most of it dropped from the answer.
  async flood(n) {
    const r = await call('flood', 'exec_command', {
      cmd: `head -c 1048576 /dev/zero | od -v | tail -1; echo flood-${n}`,
    });
    expect(r.exit_code === 0 && r.text.includes(`flood-${n}`), 'flood', r.text);
  },
  // Not in the default mix: a command that leaves a background child behind when it exits.
  async bg(n) {
    const r = await call('bg', 'exec_command', { cmd: `(sleep 300 &); echo bg-${n}` });
    expect(r.exit_code === 0 && r.text.includes(`bg-${n}`), 'bg', r.text);
  },
  async patch(n) {
    const file = `patches/p-${n}.txt`;
    const r = await call('patch', 'exec_command', {
      cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${file}\n+patched ${n}\n*** End Patch\nEOF\n`,
    });
    let content = '';
    try {
      content = readFileSync(join(workspace, file), 'utf8');
    } catch {}
    expect(r.exit_code === 0 && content === `patched ${n}\n`, 'patch', r.text);
  },
};

let sequence = 0;
async function worker(limit) {
  while (issued < limit) {
    const n = ++sequence;
    await mix[KINDS[n % KINDS.length]](n);
  }
}

// What the session is: the zsh fork's shell, inside the sandbox, with the proxy's variables.
const probe = await call('probe', 'exec_command', {
  cmd: 'echo "zsh=$ZSH_VERSION"; echo "proxy=$HTTP_PROXY"; touch "$HOME/outside" 2>/dev/null && echo wrote-outside; cat /proc/1/comm',
});
console.log(`probe: ${probe.text.split('Output:\n')[1]?.trim().replaceAll('\n', ' | ')}`);
if (
  (ZSH_FORK && !/zsh=\d/.test(probe.text)) ||
  !probe.text.includes('proxy=http://') ||
  probe.text.includes('wrote-outside')
)
  throw new Error(`the session is not what the soak needs (zsh fork, proxy, sandbox):\n${probe.text}`);

const rss = [];
const sampler = setInterval(() => {
  try {
    rss.push(rssMib(server));
  } catch {}
}, 250);

// Warm-up: every kind once or more, so that lazily started helpers (the path guard, the proxy, the
// broker, the bash grammar) are there before the baselines are taken.
await Promise.all(Array.from({ length: CLIENTS }, () => worker(WARMUP_CALLS)));
// Cancelled calls' processes end within a second or so.
await new Promise((resolve) => setTimeout(resolve, 1500));
const baseline = {
  fds: fdCount(server),
  children: descendants(server),
  rss: rssMib(server),
};
issued = 0;
measuring = true;
const loops = LOAD
  ? Array.from({ length: availableParallelism() }, () =>
      spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
    )
  : [];
const started = performance.now();
let rssAtHalf;
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    await worker(CALLS / 2);
    rssAtHalf ??= rssMib(server);
    await worker(CALLS);
  }),
);
const wallMs = performance.now() - started;
for (const loop of loops) loop.kill('SIGKILL');
measuring = false;
// What is left: processes that are not the server's helpers (each call's process has exited).
await new Promise((resolve) => setTimeout(resolve, 1500));
const after = { fds: fdCount(server), children: descendants(server), rss: rssMib(server) };
clearInterval(sampler);
const helpers = new Set(baseline.children);
const leftover = after.children.filter((pid) => !helpers.has(pid));
for (const pid of leftover) problems.push(`LEFT DURING pid ${pid}: ${commandLine(pid)}`);

// Shutdown: end the input, as a client does, with sessions still running (terminal and pipes) and
// calls still waiting; the server must answer every call, end every process and exit.
measuring = true;
const AT_SHUTDOWN = CLIENTS / 2;
for (let i = 0; i < AT_SHUTDOWN; i++) {
  const running = await call('shutdown', 'exec_command', {
    cmd: 'sleep 300',
    tty: i % 2 === 0,
    yield_time_ms: 250,
  });
  expect(running.status === 'running', 'shutdown', running.text);
}
// Cancelled calls keep their processes: shutdown must end those too.
for (let i = 0; i < 2; i++) {
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 300);
  await call('shutdown', 'exec_command', { cmd: 'sleep 300', yield_time_ms: 10_000 }, abort.signal);
}
const waiting = Array.from({ length: AT_SHUTDOWN }, (_, i) =>
  call('shutdown', 'exec_command', { cmd: 'sleep 300', tty: i % 2 === 0, yield_time_ms: 30_000 }),
);
await new Promise((resolve) => setTimeout(resolve, 1000));
measuring = false;
const everything = new Set([...descendants(server), ...ofThisHome()]);
everything.delete(server);
const closing = performance.now();
await client.close();
const shutdownMs = performance.now() - closing;
const answered = await Promise.race([
  Promise.all(waiting),
  new Promise((resolve) => setTimeout(resolve, 1000)),
]);
if (answered)
  console.log(
    `at shutdown the waiting calls were answered: ${answered.map((r) => r.status).join(', ')} (${JSON.stringify(answered[0]?.error?.code ?? answered[0]?.text.split('\n').at(-1))})`,
  );
failures.lost = open.size;
for (const what of open.values()) problems.push(`LOST ${what}`);
let survivors = [];
for (let i = 0; i < 40; i++) {
  const table = processTable();
  survivors = [...new Set([...everything, ...ofThisHome()])].filter(
    (pid) => table.has(pid) && table.get(pid).state !== 'Z',
  );
  if (survivors.length === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
for (const pid of survivors) problems.push(`LEFT AFTER pid ${pid}: ${commandLine(pid)}`);

for (const line of problems.slice(0, 40)) console.log(line);
if (problems.length > 40) console.log(`… ${problems.length - 40} more`);
const sorted = [...latencies].sort((a, b) => a - b);
const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
const zero = (name, value, of) =>
  console.log(`BENCH soak.${name} ${value}${of ? ` of ${of}` : ''} target=0 ${value === 0 ? 'ok' : 'FAIL'}`);
report('soak.calls', issued, 'calls');
report('soak.clients', CLIENTS, 'concurrent');
console.log(
  `BENCH soak.setup zsh_fork=${ZSH_FORK} load=${LOAD} loadavg=${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
report('soak.wall_s', wallMs / 1000, 's');
zero('hangs', failures.hangs, issued);
zero('lost_answers', failures.lost, issued);
zero('wrong_answers', failures.wrong, issued);
zero('errors', failures.errors, issued);
zero('leaked_sessions', leftover.length);
zero('leaked_processes_after_shutdown', survivors.length);
zero('leaked_fds', after.fds - baseline.fds);
console.log(`BENCH soak.fds ${baseline.fds} -> ${after.fds}`);
report('soak.rss_start_mib', baseline.rss, 'MiB');
report('soak.rss_half_mib', rssAtHalf ?? 0, 'MiB');
report('soak.rss_end_mib', after.rss, 'MiB');
report('soak.rss_max_mib', Math.max(...rss), 'MiB');
report('soak.rss_growth_mib', after.rss - baseline.rss, 'MiB', '<=64');
report('soak.rss_second_half_growth_mib', after.rss - (rssAtHalf ?? after.rss), 'MiB', '<=32');
report('soak.call.median_ms', median(latencies), 'ms');
report('soak.call.p99_ms', p99, 'ms');
for (const [kind, times] of [...byKind].sort()) {
  const s = [...times].sort((a, b) => a - b);
  console.log(
    `BENCH soak.${kind}.median_ms ${median(s).toFixed(1)} ms p99 ${s[Math.floor(s.length * 0.99)].toFixed(1)} ms (${s.length} calls)`,
  );
}
report('soak.shutdown_ms', shutdownMs, 'ms');
if (process.env.SOAK_STDERR) console.log(stderr.join(''));
http.closeAllConnections();
http.close();
if (!process.env.SOAK_KEEP) rmSync(home, { recursive: true, force: true });
else console.log(`home kept: ${home}`);
