// bench/network: the network by domain, in one run. Three processes, as in use: the destination
// server, the proxy (the host's @ux/network-proxy), and the client (the sandboxed command), so neither
// side shares an event loop with the proxy.
// From inside a bubblewrap sandbox with network "proxied" (@ux/sandbox-bwrap): the client, run in the
// sandbox, reaches the proxy's Unix socket through ux-sandbox-exec's bridge on 127.0.0.1:3128, against
// the same client without the sandbox connecting to the proxy's TCP port (both long-lived processes,
// driven alternately over stdin):
//   network.proxy.throughput.ratio   64 MiB through CONNECT, unsandboxed time / sandboxed time
//                                    (target >= 0.70: what the sandbox's bridge costs)
//   network.proxy.connect_ms         median time from connect to the destination's first byte through
//                                    the bridge (the unsandboxed figure beside it)
// The proxy alone, on the host:
//   network.host_proxy.vs_direct.ratio     64 MiB through CONNECT vs direct (informational: on
//                                          loopback a relay process is the cost, see the next figure)
//   network.host_proxy.vs_bare_relay.ratio the same download through a bare Node relay (accept,
//                                          connect, pipe) in the proxy's process vs through the proxy
//                                          (target >= 0.90: the proxy's own cost)
//   network.host_proxy.connect_ms          first byte through CONNECT (direct and SOCKS5 beside it)
//   network.host_proxy.unix.throughput     the same 64 MiB through the Unix listener (informational)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { alternate, median, report } from '../lib/report.mjs';

const BYTES = 64 * 1024 * 1024;
const role = process.argv[2];

if (role === 'destination') {
  // Port A: BYTES of data per connection, then end. Port B: one byte, then end.
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  const bulk = createServer((socket) => {
    socket.on('error', () => {});
    let left = BYTES;
    const pump = () => {
      while (left > 0) {
        left -= chunk.length;
        if (!socket.write(chunk)) return socket.once('drain', pump);
      }
      socket.end();
    };
    pump();
  });
  const tiny = createServer((socket) => {
    socket.on('error', () => {});
    socket.end('x');
  });
  await Promise.all(
    [bulk, tiny].map((server) => new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))),
  );
  process.stdout.write(`${JSON.stringify({ bulk: bulk.address().port, tiny: tiny.address().port })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
} else if (role === 'proxy') {
  const { createNetworkProxy } = await import('@ux/network-proxy');
  const proxy = createNetworkProxy({ policy: { allow: ['bench.test'] }, resolve: async () => ['127.0.0.1'] });
  const port = await proxy.listenTcp();
  await proxy.listenUnix(process.argv[3]);
  // Beside it, in the same process (so on the same core and event loop): the floor for a relay written
  // in Node, accept, connect to the bulk port, pipe both ways; no protocol, no decisions.
  const target = Number(process.argv[4]);
  const relay = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ host: '127.0.0.1', port: target, allowHalfOpen: true });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port, relay: relay.address().port })}\n`);
  process.stdin.resume();
  process.stdin.on('end', async () => {
    await proxy.close();
    process.exit(0);
  });
} else if (role === 'client') {
  // One request per stdin line ("download PORT" or "first-byte PORT") through CONNECT to the proxy
  // port given, answered with the milliseconds it took.
  const via = { kind: 'connect', port: Number(process.argv[3]) };
  for await (const line of createInterface({ input: process.stdin })) {
    const [what, port] = line.split(' ');
    try {
      const ms = what === 'download' ? await download(via, Number(port)) : await firstByte(via, Number(port));
      process.stdout.write(`${ms}\n`);
    } catch (error) {
      process.stdout.write(`error ${error.message}\n`);
    }
  }
} else {
  await main();
}

/** A client process driven over stdin; `ask(line)` resolves with its answer in milliseconds. */
function driven(child) {
  const answers = createInterface({ input: child.stdout });
  const waiting = [];
  answers.on('line', (line) => waiting.shift()?.(line));
  return {
    child,
    ask(line) {
      return new Promise((resolve, reject) => {
        waiting.push((answer) =>
          answer.startsWith('error') ? reject(new Error(`client: ${answer}`)) : resolve(Number(answer)),
        );
        child.stdin.write(`${line}\n`);
      });
    },
  };
}

/**
 * The same transfers from inside bubblewrap (network "proxied": the bridge to the proxy's Unix socket)
 * and from the host (the proxy's TCP port).
 */
async function sandboxed({ dir, path, proxyPort, bulk, tiny, mibPerSecond }) {
  const { createBwrapSandbox } = await import('@ux/sandbox-bwrap');
  const backend = createBwrapSandbox();
  const probe = await backend.probe();
  if (!probe.available) {
    console.error(`bench/network: bubblewrap cannot run here, sandboxed figures skipped: ${probe.reason}`);
    return;
  }
  const self = fileURLToPath(import.meta.url);
  const plan = await backend.plan({
    argv: [process.execPath, self, 'client', '3128'],
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    policy: {
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'special', value: 'cwd' }, access: 'write' },
        ],
      },
      network: 'proxied',
      networkProxy: { unixSocket: path },
    },
    tty: false,
  });
  const inside = driven(
    spawn(plan.argv[0], plan.argv.slice(1), {
      cwd: plan.cwd,
      env: plan.env,
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const outside = driven(
    spawn(process.execPath, [self, 'client', String(proxyPort)], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  try {
    const throughput = await alternate({
      subject: () => inside.ask(`download ${bulk}`),
      baseline: () => outside.ask(`download ${bulk}`),
      rounds: 9,
      warmup: 2,
    });
    report('network.proxy.throughput', mibPerSecond(throughput.subject), 'MiB/s');
    report('network.proxy.unsandboxed.throughput', mibPerSecond(throughput.baseline), 'MiB/s');
    report('network.proxy.throughput.ratio', throughput.baseline / throughput.subject, 'x', '>=0.70');
    const latency = await alternate({
      subject: () => inside.ask(`first-byte ${tiny}`),
      baseline: () => outside.ask(`first-byte ${tiny}`),
      rounds: 200,
      warmup: 20,
    });
    report('network.proxy.connect_ms', latency.subject, 'ms');
    report('network.proxy.unsandboxed.connect_ms', latency.baseline, 'ms');
    report('network.proxy.connect_overhead_ms', latency.subject - latency.baseline, 'ms');
  } finally {
    for (const { child } of [inside, outside]) child.stdin.end();
    await Promise.all(
      [inside, outside].map(({ child }) => new Promise((resolve) => child.once('exit', resolve))),
    );
    await plan.cleanup?.();
    await backend.close();
  }
}

function start(args) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve({ child, info: JSON.parse(text) });
    });
    child.once('exit', (code) => reject(new Error(`bench network ${args[0]} exited with ${code}`)));
  });
}

/** Opens a connection and resolves once the destination is reachable on it, with any bytes already read. */
function open(via, port) {
  return new Promise((resolve, reject) => {
    const target = via.path ? { path: via.path } : { host: '127.0.0.1', port: via.port ?? port };
    // `direct` with a port of its own is the bare relay: it connects through to the bulk port by itself.
    const socket = connect(target);
    socket.setNoDelay(true);
    socket.once('error', reject);
    if (via.kind === 'direct')
      return socket.once('connect', () => resolve({ socket, rest: Buffer.alloc(0) }));
    let buffer = Buffer.alloc(0);
    const onData = (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (via.kind === 'connect') {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!buffer.subarray(0, 12).toString().startsWith('HTTP/1.1 200'))
          reject(new Error(buffer.toString()));
        socket.off('data', onData);
        resolve({ socket, rest: buffer.subarray(end + 4) });
      } else {
        // SOCKS5: method reply (2 bytes) + reply with an IPv4 bound address (10 bytes).
        if (buffer.length < 12) return;
        if (buffer[3] !== 0x00) reject(new Error(`SOCKS reply ${buffer[3]}`));
        socket.off('data', onData);
        resolve({ socket, rest: buffer.subarray(12) });
      }
    };
    socket.on('data', onData);
    socket.once('connect', () => {
      if (via.kind === 'connect')
        socket.write(`CONNECT bench.test:${port} HTTP/1.1\r\nHost: bench.test:${port}\r\n\r\n`);
      else {
        const name = Buffer.from('bench.test');
        const portBytes = Buffer.from([port >> 8, port & 0xff]);
        // Greeting and request in one write, as curl does once it knows the method.
        socket.write(Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, name.length]), name, portBytes]));
      }
    });
  });
}

/** Runs each of `runs` once per round, in a rotating order, after `warmup` rounds; returns their medians. */
async function rotate(runs, { rounds, warmup }) {
  for (let round = 0; round < warmup; round++) for (const run of runs) await run();
  const times = runs.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let step = 0; step < runs.length; step++) {
      const index = (round + step) % runs.length;
      times[index].push(await runs[index]());
    }
  }
  return times.map(median);
}

/** Downloads BYTES from the bulk port; returns milliseconds. */
async function download(via, port) {
  const started = process.hrtime.bigint();
  const { socket, rest } = await open(via, port);
  let received = rest.length;
  await new Promise((resolve, reject) => {
    socket.on('data', (chunk) => {
      received += chunk.length;
    });
    socket.once('end', resolve);
    socket.once('error', reject);
  });
  socket.destroy();
  if (received !== BYTES) throw new Error(`expected ${BYTES} bytes, got ${received}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** From connect to the first byte of the destination's answer. */
async function firstByte(via, port) {
  const started = process.hrtime.bigint();
  const { socket, rest } = await open(via, port);
  if (rest.length === 0) await new Promise((resolve) => socket.once('data', resolve));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  socket.destroy();
  return ms;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ux-bench-net-'));
  const path = join(dir, 'proxy.sock');
  const destination = await start(['destination']);
  const proxy = await start(['proxy', path, String(destination.info.bulk)]);
  const { bulk, tiny } = destination.info;
  const direct = { kind: 'direct' };
  const viaConnect = { kind: 'connect', port: proxy.info.port };
  const viaSocks = { kind: 'socks5', port: proxy.info.port };
  const viaUnix = { kind: 'connect', path };
  const viaRelay = { kind: 'direct', port: proxy.info.relay };
  const mibPerSecond = (ms) => BYTES / (1024 * 1024) / (ms / 1000);
  try {
    const [proxied, straight, relayed] = await rotate(
      [() => download(viaConnect, bulk), () => download(direct, bulk), () => download(viaRelay, bulk)],
      { rounds: 15, warmup: 2 },
    );
    report('network.host_proxy.throughput', mibPerSecond(proxied), 'MiB/s');
    report('network.direct.throughput', mibPerSecond(straight), 'MiB/s');
    report('network.bare_relay.throughput', mibPerSecond(relayed), 'MiB/s');
    report('network.host_proxy.vs_direct.ratio', straight / proxied, 'x');
    report('network.host_proxy.vs_bare_relay.ratio', relayed / proxied, 'x', '>=0.90');
    const unix = await alternate({
      subject: () => download(viaUnix, bulk),
      baseline: () => download(direct, bulk),
      rounds: 5,
      warmup: 1,
    });
    report('network.host_proxy.unix.throughput', mibPerSecond(unix.subject), 'MiB/s');
    report('network.host_proxy.unix.throughput.ratio', unix.baseline / unix.subject, 'x');
    const latency = await alternate({
      subject: () => firstByte(viaConnect, tiny),
      baseline: () => firstByte(direct, tiny),
      rounds: 200,
      warmup: 20,
    });
    report('network.host_proxy.connect_ms', latency.subject, 'ms');
    report('network.direct.connect_ms', latency.baseline, 'ms');
    report('network.host_proxy.connect_overhead_ms', latency.subject - latency.baseline, 'ms');
    const socks = await alternate({
      subject: () => firstByte(viaSocks, tiny),
      baseline: () => firstByte(direct, tiny),
      rounds: 200,
      warmup: 20,
    });
    report('network.host_proxy.socks5.connect_ms', socks.subject, 'ms');
    await sandboxed({ dir, path, proxyPort: proxy.info.port, bulk, tiny, mibPerSecond });
  } finally {
    const children = [destination.child, proxy.child];
    for (const child of children) child.stdin.end();
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    rmSync(dir, { recursive: true, force: true });
  }
}
