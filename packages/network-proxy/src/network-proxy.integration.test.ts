import { statSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  curl,
  deferred,
  dial,
  type Echo,
  type Endpoint,
  eventually,
  httpConnect,
  type Origin,
  rawExchange,
  rawExchangeBytes,
  readAll,
  readBytes,
  readHead,
  resolverFor,
  socks5Request,
  startEcho,
  startOrigin,
} from '../test/test-kit.js';
import type { NetworkConnectionEvent } from './connection-record.js';
import { createNetworkProxy, type NetworkProxyOptions } from './create-network-proxy.js';
import type { NetworkAccessRequest, NetworkAskAnswer } from './network-decider.js';

useLeakCheck();

const names = {
  'allowed.test': ['127.0.0.1'],
  'denied.test': ['127.0.0.1'],
  'unknown.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'wild.test': ['127.0.0.1'],
  'api.wild.test': ['127.0.0.1'],
  'deep.api.wild.test': ['127.0.0.1'],
  'blocked.wild.test': ['127.0.0.1'],
  'public.wild.test': ['192.0.2.1', '127.0.0.1'],
};
const policy = { allow: ['allowed.test', '*.wild.test'], deny: ['denied.test', 'blocked.wild.test'] };

let origin: Origin;
let echo: Echo;
beforeAll(async () => {
  origin = await startOrigin();
  echo = await startEcho();
});
afterAll(async () => {
  await origin.close();
  await echo.close();
});

/** A proxy on a loopback port, closed when the test ends; its events collected. */
async function startProxy(options: Partial<NetworkProxyOptions> = {}) {
  const proxy = createNetworkProxy({ policy, resolve: resolverFor(names), ...options });
  const events: NetworkConnectionEvent[] = [];
  proxy.onConnection((event) => events.push(event));
  const port = await proxy.listenTcp();
  onTestFinished(() => proxy.close());
  const endpoint: Endpoint = { port };
  return { proxy, port, endpoint, events, url: `http://127.0.0.1:${port}` };
}

/** A plain proxied GET through Node's own HTTP client. */
function proxiedGet(
  endpoint: Endpoint,
  url: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: IncomingMessage['headers']; rawHeaders: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      {
        ...('path' in endpoint ? { socketPath: endpoint.path } : { host: '127.0.0.1', port: endpoint.port }),
        method: body === undefined ? 'GET' : 'POST',
        path: url,
        headers: { Host: target.host, ...headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function echoThrough(socket: import('node:net').Socket, text: string): Promise<string> {
  socket.write(text);
  return (await readBytes(socket, Buffer.byteLength(text))).toString();
}

async function closedPort(): Promise<number> {
  const spare = await startEcho();
  await spare.close();
  return spare.port;
}

describe('plain HTTP requests', () => {
  it('forwards an allowed request in origin-form with Host rewritten (curl)', async () => {
    const { url, events } = await startProxy();
    const result = await curl(['--proxy', url, `http://ALLOWED.test.:${origin.port}/path/x?y=1&z=%20`]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const seen = JSON.parse(result.stdout);
    expect(seen).toMatchObject({ method: 'GET', url: '/path/x?y=1&z=%20' });
    expect(seen.headers.host).toBe(`allowed.test:${origin.port}`);
    expect(seen.headers['proxy-connection']).toBeUndefined();
    await eventually(() => events.length === 1, 3_000, 'the connection event');
    const [event] = events;
    expect(event).toMatchObject({
      host: 'allowed.test',
      port: origin.port,
      protocol: 'http',
      decision: 'allowed',
      decidedBy: 'policy',
      address: '127.0.0.1',
    });
    expect(event!.error).toBeUndefined();
    expect(event!.bytesUp).toBeGreaterThan(50);
    expect(event!.bytesDown).toBeGreaterThan(result.stdout.length);
    expect(event!.endedAt).toBeGreaterThanOrEqual(event!.startedAt);
  });

  it('drops hop-by-hop and Proxy-* headers both ways and passes bodies through (Node client)', async () => {
    const { endpoint } = await startProxy();
    const response = await proxiedGet(
      endpoint,
      `http://allowed.test:${origin.port}/post`,
      {
        'Proxy-Authorization': 'Basic c2VjcmV0',
        'Proxy-Connection': 'keep-alive',
        'Proxy-Session': 'for the proxy only',
        Connection: 'X-Private',
        'X-Private': 'named by Connection',
        'X-Kept': 'yes',
        TE: 'trailers',
      },
      'hello body',
    );
    expect(response.status).toBe(200);
    const seen = JSON.parse(response.body);
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('hello body');
    expect(seen.headers['x-kept']).toBe('yes');
    for (const dropped of ['proxy-authorization', 'proxy-connection', 'proxy-session', 'x-private', 'te'])
      expect(seen.headers[dropped], dropped).toBeUndefined();
    expect(seen.headers.connection).toBe('close');
    // The origin's Connection-named header and Keep-Alive stay behind (the proxy's own connection to
    // the client may carry its own Keep-Alive); both cookies come through.
    expect(response.headers['x-hop']).toBeUndefined();
    expect(response.headers['keep-alive'] ?? '').not.toContain('max=7');
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('decides every request of a kept-alive connection on its own', async () => {
    const { endpoint, events } = await startProxy();
    const answer = await rawExchange(
      endpoint,
      `GET http://allowed.test:${origin.port}/first HTTP/1.1\r\nHost: allowed.test\r\n\r\n` +
        `GET http://denied.test:${origin.port}/second HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`,
    );
    const [first, second] = answer.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toContain('"url":"/first"');
    expect(second).toMatch(/^HTTP\/1\.1 403 Blocked by ux network policy/);
    expect(second).toContain('denied.test');
    expect(origin.requests.some((request) => request.url === '/second')).toBe(false);
    await eventually(() => events.length === 2);
    // Node parses pipelined requests ahead: the refusal is reported before the forwarded exchange ends.
    expect(events.map((event) => [event.host, event.decision]).sort()).toEqual([
      ['allowed.test', 'allowed'],
      ['denied.test', 'denied'],
    ]);
  });

  it('refuses a denied host with 403, the allow-list header and a text naming host and rule', async () => {
    const { endpoint, url, events } = await startProxy();
    const response = await proxiedGet(endpoint, `http://denied.test:${origin.port}/`);
    expect(response.status).toBe(403);
    expect(response.headers['x-proxy-error']).toBe('blocked-by-allowlist');
    expect(response.headers['x-ux-denied']).toBe('deny_list; host=denied.test');
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toBe(
      'ux: network access to "denied.test" is not allowed by the sandbox\'s network policy (deny list: it matches "denied.test" in network.deny, which wins over network.allow); remove that entry to allow it\n',
    );
    const viaCurl = await curl(['--proxy', url, '--include', `http://denied.test:${origin.port}/`]);
    expect(viaCurl.stdout).toMatch(
      /^HTTP\/1\.1 403 Blocked by ux network policy: denied\.test is in network\.deny\r\n/,
    );
    expect(viaCurl.stdout).toContain('X-Proxy-Error: blocked-by-allowlist');
    const unknown = await proxiedGet(endpoint, `http://unknown.test:${origin.port}/`);
    expect(unknown.status).toBe(403);
    expect(unknown.body).toContain(
      '"unknown.test" is not allowed by the sandbox\'s network policy (it is not in network.allow); add it to network.allow\n',
    );
    expect(origin.requests.some((request) => request.headers.host?.startsWith('denied.test'))).toBe(false);
    await eventually(() => events.length === 3);
    expect(events.map((event) => [event.host, event.decision, event.denial, event.bytesUp])).toEqual([
      ['denied.test', 'denied', 'deny_list', 0],
      ['denied.test', 'denied', 'deny_list', 0],
      ['unknown.test', 'denied', 'not_in_allow_list', 0],
    ]);
  });

  it('answers 502 with the reason when the destination cannot be reached or resolved', async () => {
    const { endpoint, events } = await startProxy({ policy: { allow: ['allowed.test', 'nowhere.test'] } });
    const port = await closedPort();
    const refused = await proxiedGet(endpoint, `http://allowed.test:${port}/`);
    expect(refused.status).toBe(502);
    expect(refused.headers['x-proxy-error']).toBe('upstream-connect-failed');
    expect(refused.body).toBe(
      `ux: could not connect to allowed.test:${port} (127.0.0.1): connection refused (ECONNREFUSED)\n`,
    );
    const unresolved = await proxiedGet(endpoint, 'http://nowhere.test/');
    expect(unresolved.status).toBe(502);
    expect(unresolved.headers['x-proxy-error']).toBe('upstream-resolve-failed');
    expect(unresolved.body).toBe('ux: could not resolve "nowhere.test" (ENOTFOUND)\n');
    await eventually(() => events.length === 2);
    expect(events[0]).toMatchObject({ decision: 'allowed', error: expect.stringContaining('ECONNREFUSED') });
  });

  it('answers 400 to requests a proxy cannot forward', async () => {
    const { endpoint } = await startProxy();
    const originForm = await rawExchange(
      endpoint,
      'GET /index.html HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n',
    );
    expect(originForm).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(originForm).toContain('ux: this is a proxy');
    const https = await rawExchange(
      endpoint,
      'GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n',
    );
    expect(https).toMatch(/^HTTP\/1\.1 400 /);
    expect(https).toContain('send CONNECT host:443');
    const badHost = await rawExchange(
      endpoint,
      'GET http://bad_host!/ HTTP/1.1\r\nConnection: close\r\n\r\n',
    );
    expect(badHost).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('HTTP upgrades', () => {
  it('passes an allowed upgrade on in origin-form and tunnels after it; refuses a denied one', async () => {
    const { endpoint, events } = await startProxy();
    const socket = await dial(endpoint);
    socket.write(
      `GET http://allowed.test:${origin.port}/socket?x=1 HTTP/1.1\r\nHost: allowed.test:${origin.port}\r\n` +
        'Connection: Upgrade\r\nUpgrade: echo\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n',
    );
    const { status } = await readHead(socket);
    expect(status).toBe(101);
    expect(await echoThrough(socket, 'after the upgrade')).toBe('after the upgrade');
    socket.destroy();
    const seen = origin.requests.at(-1)!;
    expect(seen).toMatchObject({
      url: '/socket?x=1',
      headers: { upgrade: 'echo', host: `allowed.test:${origin.port}` },
    });
    expect(seen.headers['proxy-authorization']).toBeUndefined();
    const denied = await rawExchange(
      endpoint,
      `GET http://denied.test:${origin.port}/socket HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`,
    );
    expect(denied).toMatch(/^HTTP\/1\.1 403 Blocked by ux network policy/);
    expect(denied).toContain('X-Proxy-Error: blocked-by-allowlist');
    await eventually(() => events.length === 2);
    expect(events.map((event) => [event.protocol, event.decision]).sort()).toEqual([
      ['http', 'allowed'],
      ['http', 'denied'],
    ]);
  });
});

describe('HTTP CONNECT', () => {
  it('tunnels to an allowed host (curl --proxytunnel)', async () => {
    const { url, events } = await startProxy();
    const result = await curl([
      '--proxy',
      url,
      '--proxytunnel',
      `http://allowed.test:${origin.port}/tunnelled`,
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      url: '/tunnelled',
      headers: { host: `allowed.test:${origin.port}` },
    });
    await eventually(() => events.length === 1);
    expect(events[0]).toMatchObject({ protocol: 'https', decision: 'allowed', host: 'allowed.test' });
  });

  it('carries bytes both ways and counts them, including bytes sent with the request', async () => {
    const { endpoint, events } = await startProxy();
    const socket = await dial(endpoint);
    socket.write(
      `CONNECT allowed.test:${echo.port} HTTP/1.1\r\nHost: allowed.test:${echo.port}\r\n\r\nearly bytes|`,
    );
    const head = await readBytes(socket, 'HTTP/1.1 200 Connection Established\r\n\r\n'.length);
    expect(head.toString()).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
    expect((await readBytes(socket, 'early bytes|'.length)).toString()).toBe('early bytes|');
    expect(await echoThrough(socket, 'more')).toBe('more');
    socket.end();
    await readAll(socket);
    await eventually(() => events.length === 1);
    expect(events[0]).toMatchObject({ bytesUp: 16, bytesDown: 16, decision: 'allowed', protocol: 'https' });
  });

  it('refuses a denied host with 403 and the same text', async () => {
    const { endpoint, url } = await startProxy();
    const { status, head, socket } = await httpConnect(endpoint, `denied.test:${echo.port}`);
    const body = (await readAll(socket)).toString();
    socket.destroy();
    expect(status).toBe(403);
    expect(head).toContain('X-Proxy-Error: blocked-by-allowlist');
    // The status line and a header name the host and the reason: curl -v shows them, Python prints the line.
    expect(head).toMatch(
      /^HTTP\/1\.1 403 Blocked by ux network policy: denied\.test is in network\.deny\r\n/,
    );
    expect(head).toContain('X-Ux-Denied: deny_list; host=denied.test\r\n');
    expect(body).toContain('ux: network access to "denied.test" is not allowed');
    const viaCurl = await curl(['--proxy', url, '--proxytunnel', `http://denied.test:${origin.port}/`]);
    expect(viaCurl.code).not.toBe(0);
    expect(viaCurl.stderr).toContain('403');
  });

  it('answers 400 to an authority without a port and 502 to a closed port', async () => {
    const { endpoint } = await startProxy();
    const noPort = await rawExchange(endpoint, 'CONNECT allowed.test HTTP/1.1\r\n\r\n');
    expect(noPort).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(noPort).toContain('CONNECT needs host:port');
    const port = await closedPort();
    const refused = await rawExchange(endpoint, `CONNECT allowed.test:${port} HTTP/1.1\r\n\r\n`);
    expect(refused).toMatch(/^HTTP\/1\.1 502 Bad Gateway/);
    expect(refused).toContain('connection refused');
  });
});

describe('SOCKS5', () => {
  it('connects by domain name, resolved by the proxy (curl --socks5-hostname)', async () => {
    const resolve = resolverFor(names);
    const { port, events } = await startProxy({ resolve });
    const result = await curl([
      '--socks5-hostname',
      `127.0.0.1:${port}`,
      `http://allowed.test:${origin.port}/socks`,
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ url: '/socks' });
    // curl sent the name; the proxy resolved it.
    expect([...resolve.lookups]).toEqual([['allowed.test', 1]]);
    await eventually(() => events.length === 1);
    expect(events[0]).toMatchObject({ protocol: 'socks5', decision: 'allowed', host: 'allowed.test' });
  });

  it('tunnels by domain name, answering with the bound address (raw client)', async () => {
    const { endpoint, events } = await startProxy();
    const { code, socket, reply } = await socks5Request(
      endpoint,
      { type: 'domain', host: 'allowed.test' },
      echo.port,
    );
    expect(code).toBe(0x00);
    expect([...reply.subarray(3, 8)]).toEqual([0x01, 127, 0, 0, 1]);
    expect(await echoThrough(socket, 'ping')).toBe('ping');
    socket.destroy();
    await eventually(() => events.length === 1);
    expect(events[0]).toMatchObject({ bytesUp: 4, bytesDown: 4 });
  });

  it('refuses denied and unknown hosts with 0x02 (connection not allowed by ruleset)', async () => {
    const { endpoint, port } = await startProxy();
    const before = echo.received();
    for (const host of ['denied.test', 'unknown.test', 'blocked.wild.test']) {
      const { code, socket } = await socks5Request(endpoint, { type: 'domain', host }, echo.port);
      socket.destroy();
      expect(code, host).toBe(0x02);
    }
    const viaCurl = await curl([
      '--socks5-hostname',
      `127.0.0.1:${port}`,
      `http://denied.test:${origin.port}/`,
    ]);
    expect(viaCurl.code).not.toBe(0);
    expect(echo.received()).toBe(before);
  });

  it('takes an IPv4 literal as its own name: allowed only when listed', async () => {
    const unlisted = await startProxy();
    const refused = await socks5Request(unlisted.endpoint, { type: 'ipv4', host: '127.0.0.1' }, echo.port);
    refused.socket.destroy();
    expect(refused.code).toBe(0x02);
    const listed = await startProxy({ policy: { allow: ['127.0.0.1'] } });
    const allowed = await socks5Request(listed.endpoint, { type: 'ipv4', host: '127.0.0.1' }, echo.port);
    expect(allowed.code).toBe(0x00);
    expect(await echoThrough(allowed.socket, 'by address')).toBe('by address');
    allowed.socket.destroy();
    // 127.1 is 127.0.0.1 spelled otherwise: the same entry decides it.
    const spelled = await socks5Request(listed.endpoint, { type: 'domain', host: '127.1' }, echo.port);
    expect(spelled.code).toBe(0x00);
    spelled.socket.destroy();
    await eventually(() => listed.events.length === 2);
    expect(listed.events.map((event) => event.host)).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('reads IPv6 addresses: ::1 listed is connected to, IPv4-mapped is decided as IPv4', async () => {
    const { endpoint } = await startProxy({ policy: { allow: ['::1', '127.0.0.1'] } });
    const port = await closedPort();
    const v6 = await socks5Request(endpoint, { type: 'ipv6', bytes: [...new Array(15).fill(0), 1] }, port);
    v6.socket.destroy();
    // Nothing listens on [::1]:port: allowed, then refused by the destination (0x05), not by the rules.
    expect(v6.code).toBe(0x05);
    const mapped = [...new Array(10).fill(0), 0xff, 0xff, 127, 0, 0, 1];
    const viaMapped = await socks5Request(endpoint, { type: 'ipv6', bytes: mapped }, echo.port);
    expect(viaMapped.code).toBe(0x00);
    expect(await echoThrough(viaMapped.socket, 'mapped')).toBe('mapped');
    viaMapped.socket.destroy();
    const other = await startProxy({ policy: { allow: [] } });
    const unlisted = await socks5Request(
      other.endpoint,
      { type: 'ipv6', bytes: [...new Array(15).fill(0), 1] },
      port,
    );
    unlisted.socket.destroy();
    expect(unlisted.code).toBe(0x02);
  });

  it('answers BIND and UDP ASSOCIATE with 0x07 (command not supported)', async () => {
    const { endpoint, events } = await startProxy();
    for (const command of [0x02, 0x03]) {
      const { code, socket } = await socks5Request(
        endpoint,
        { type: 'domain', host: 'allowed.test' },
        echo.port,
        command,
      );
      socket.destroy();
      expect(code).toBe(0x07);
    }
    expect(events).toEqual([]);
  });

  it('maps upstream failures to reply codes: refused 0x05, unresolvable 0x04', async () => {
    const { endpoint } = await startProxy({ policy: { allow: ['allowed.test', 'nowhere.test'] } });
    const port = await closedPort();
    const refused = await socks5Request(endpoint, { type: 'domain', host: 'allowed.test' }, port);
    refused.socket.destroy();
    expect(refused.code).toBe(0x05);
    const unresolved = await socks5Request(endpoint, { type: 'domain', host: 'nowhere.test' }, port);
    unresolved.socket.destroy();
    expect(unresolved.code).toBe(0x04);
  });

  it('answers an unknown address type with 0x08, no acceptable method with 0xff, SOCKS4 with its rejection', async () => {
    const { endpoint } = await startProxy();
    const badType = await rawExchangeBytes(
      endpoint,
      Buffer.from([0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x09, 1, 2, 3, 4, 0, 80]),
    );
    expect([...badType]).toEqual([0x05, 0x00, 0x05, 0x08, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
    const onlyPassword = await rawExchangeBytes(endpoint, Buffer.from([0x05, 0x01, 0x02]));
    expect([...onlyPassword]).toEqual([0x05, 0xff]);
    const socks4 = await rawExchangeBytes(
      endpoint,
      Buffer.from([0x04, 0x01, 0x00, 0x50, 127, 0, 0, 1, 0x00]),
    );
    expect([...socks4]).toEqual([0x00, 0x5b, 0, 0, 0, 0, 0, 0]);
  });
});

describe('policy through the proxy', () => {
  it('*.domain allows the names below it, not the apex; deny wins; case and trailing dot do not matter', async () => {
    const { endpoint } = await startProxy({ allowLocalAddresses: true });
    const status = async (host: string) =>
      (await proxiedGet(endpoint, `http://${host}:${origin.port}/`)).status;
    expect(await status('api.wild.test')).toBe(200);
    expect(await status('DEEP.api.Wild.test.')).toBe(200);
    expect(await status('wild.test')).toBe(403);
    expect(await status('blocked.wild.test')).toBe(403);
    expect(await status('Denied.TEST.')).toBe(403);
    expect(await status('Allowed.Test.')).toBe(200);
  });

  it('refuses a wildcard-allowed name whose addresses are all local, unless allowLocalAddresses', async () => {
    const strict = await startProxy();
    const refused = await proxiedGet(strict.endpoint, `http://api.wild.test:${origin.port}/`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('resolves only to local or private addresses (127.0.0.1)');
    // An exact entry is an explicit choice: allowed.test → 127.0.0.1 is connected.
    expect((await proxiedGet(strict.endpoint, `http://allowed.test:${origin.port}/`)).status).toBe(200);
    await eventually(() => strict.events.length === 2);
    expect(strict.events[0]).toMatchObject({
      decision: 'denied',
      denial: 'local_address',
      host: 'api.wild.test',
    });
  });

  it('tries only the public addresses of a mixed answer', async () => {
    const { endpoint, events } = await startProxy({ connectTimeoutMs: 300 });
    const response = await proxiedGet(endpoint, `http://public.wild.test:${origin.port}/`);
    expect([502, 504]).toContain(response.status);
    expect(response.body).toContain('(192.0.2.1)');
    expect(origin.requests.some((request) => request.headers.host?.startsWith('public.wild.test'))).toBe(
      false,
    );
    await eventually(() => events.length === 1);
    expect(events[0]!.address).toBeUndefined();
  });

  it('takes a new policy for the next connection', async () => {
    const { proxy, endpoint } = await startProxy();
    expect((await proxiedGet(endpoint, `http://other.test:${origin.port}/`)).status).toBe(403);
    proxy.setPolicy({ allow: ['other.test'] });
    expect((await proxiedGet(endpoint, `http://other.test:${origin.port}/`)).status).toBe(200);
    expect(() => proxy.setPolicy({ allow: ['bad..name'] })).toThrow('network.allow: "bad..name"');
    expect((await proxiedGet(endpoint, `http://other.test:${origin.port}/`)).status).toBe(200);
  });
});

describe('asking about unknown hosts', () => {
  function askWith(answers: NetworkAskAnswer[]) {
    const calls: { request: NetworkAccessRequest; signal: AbortSignal }[] = [];
    const gates = answers.map(() => deferred<void>());
    const ask = async (request: NetworkAccessRequest, { signal }: { signal: AbortSignal }) => {
      calls.push({ request, signal });
      const index = calls.length - 1;
      await gates[index]!.promise;
      return answers[index]!;
    };
    return { ask, calls, release: (index: number) => gates[index]!.resolve() };
  }

  it('asks once for three concurrent connections; allow_session lets later ones through without asking', async () => {
    const { ask, calls, release } = askWith(['allow_session']);
    const { proxy, endpoint, url, events } = await startProxy({ ask, allowLocalAddresses: true });
    const plain = proxiedGet(endpoint, `http://unknown.test:${origin.port}/one`);
    const tunnel = httpConnect(endpoint, `Unknown.Test.:${echo.port}`);
    const socks = socks5Request(endpoint, { type: 'domain', host: 'unknown.test' }, echo.port);
    await eventually(() => proxy.connections().length === 3, 15_000, 'three waiting connections');
    expect(proxy.connections()).toHaveLength(3);
    expect(proxy.connections().every((connection) => connection.decision === undefined)).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.request.host).toBe('unknown.test');
    release(0);
    expect((await plain).status).toBe(200);
    const connected = await tunnel;
    expect(connected.status).toBe(200);
    expect(await echoThrough(connected.socket, 'tunnel')).toBe('tunnel');
    connected.socket.destroy();
    const viaSocks = await socks;
    expect(viaSocks.code).toBe(0x00);
    viaSocks.socket.destroy();
    const later = await curl(['--proxy', url, `http://unknown.test:${origin.port}/later`]);
    expect(later.code).toBe(0);
    expect(calls).toHaveLength(1);
    await eventually(() => events.length === 4);
    expect(events.map((event) => event.decidedBy).sort()).toEqual(['ask', 'ask', 'ask', 'session']);
    expect(events.every((event) => event.decision === 'asked_allowed')).toBe(true);
  });

  it('deny refuses the waiting connections and the next connection asks again', async () => {
    const { ask, calls, release } = askWith(['deny', 'allow_once']);
    const { endpoint, events } = await startProxy({ ask, allowLocalAddresses: true });
    const refused = proxiedGet(endpoint, `http://unknown.test:${origin.port}/`);
    await eventually(() => calls.length === 1);
    release(0);
    const response = await refused;
    expect(response.status).toBe(403);
    expect(response.headers['x-proxy-error']).toBe('blocked-by-allowlist');
    expect(response.body).toBe('ux: network access to "unknown.test" was refused when approval was asked\n');
    const again = socks5Request(endpoint, { type: 'domain', host: 'unknown.test' }, echo.port);
    await eventually(() => calls.length === 2);
    expect(calls[1]!.request).toEqual({ host: 'unknown.test', port: echo.port, protocol: 'socks5' });
    release(1);
    const { code, socket } = await again;
    socket.destroy();
    expect(code).toBe(0x00);
    await eventually(() => events.length === 2);
    expect(events.map((event) => [event.decision, event.denial])).toEqual([
      ['asked_denied', 'refused'],
      ['asked_allowed', undefined],
    ]);
  });

  it('deny_session is remembered: later connections are refused without a question', async () => {
    const { ask, calls, release } = askWith(['deny_session']);
    const { endpoint, events } = await startProxy({ ask });
    const first = httpConnect(endpoint, `unknown.test:${echo.port}`);
    await eventually(() => calls.length === 1);
    release(0);
    const refused = await first;
    refused.socket.destroy();
    expect(refused.status).toBe(403);
    const second = await proxiedGet(endpoint, `http://unknown.test:${origin.port}/`);
    expect(second.status).toBe(403);
    expect(second.body).toContain('for the rest of this session');
    const third = await socks5Request(endpoint, { type: 'domain', host: 'UNKNOWN.test' }, echo.port);
    third.socket.destroy();
    expect(third.code).toBe(0x02);
    expect(calls).toHaveLength(1);
    await eventually(() => events.length === 3);
    expect(events.map((event) => event.decidedBy)).toEqual(['ask', 'session', 'session']);
  });

  it('a throwing ask refuses with its reason and is asked again next time', async () => {
    let count = 0;
    const { endpoint } = await startProxy({
      ask: () => {
        count += 1;
        throw new Error('no reviewer is attached');
      },
    });
    const response = await proxiedGet(endpoint, `http://unknown.test:${origin.port}/`);
    expect(response.status).toBe(403);
    expect(response.body).toBe(
      'ux: network access to "unknown.test" could not be approved (no reviewer is attached); it is refused\n',
    );
    await proxiedGet(endpoint, `http://unknown.test:${origin.port}/`);
    expect(count).toBe(2);
  });

  it('withdraws the question when the waiting client goes away, and reports the connection as cancelled', async () => {
    const { ask, calls } = askWith(['allow_once']);
    const { proxy, endpoint, events } = await startProxy({ ask });
    const socket = await dial(endpoint);
    socket.write(`CONNECT unknown.test:${echo.port} HTTP/1.1\r\n\r\n`);
    await eventually(() => calls.length === 1);
    socket.destroy();
    await eventually(() => calls[0]!.signal.aborted, 3_000, 'the question to be withdrawn');
    await eventually(() => events.length === 1);
    expect(events[0]).toMatchObject({ decision: 'asked_denied', denial: 'cancelled', host: 'unknown.test' });
    await eventually(() => proxy.stats.openSockets === 0);
  });

  it('close() withdraws open questions and resolves', async () => {
    const { ask, calls } = askWith(['allow_once']);
    const { proxy, endpoint, events } = await startProxy({ ask });
    const waiting = socks5Request(endpoint, { type: 'domain', host: 'unknown.test' }, echo.port).catch(
      (error) => error,
    );
    await eventually(() => calls.length === 1);
    await proxy.close();
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(await waiting).toBeInstanceOf(Error);
    expect(events).toMatchObject([{ denial: 'cancelled' }]);
    expect(proxy.stats).toMatchObject({ openSockets: 0, openConnections: 0 });
  });
});

describe('the Unix socket listener', () => {
  it('serves CONNECT, SOCKS5 and plain HTTP like the TCP one, with mode 0600, and removes its socket', async () => {
    const dir = tempDir('ux-proxy-');
    const path = join(dir, 'proxy.sock');
    const proxy = createNetworkProxy({ policy, resolve: resolverFor(names) });
    onTestFinished(() => proxy.close());
    const events: NetworkConnectionEvent[] = [];
    proxy.onConnection((event) => events.push(event));
    await proxy.listenUnix(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const endpoint: Endpoint = { path };
    const tunnel = await httpConnect(endpoint, `allowed.test:${echo.port}`);
    expect(tunnel.status).toBe(200);
    expect(await echoThrough(tunnel.socket, 'over unix')).toBe('over unix');
    tunnel.socket.destroy();
    const socks = await socks5Request(endpoint, { type: 'domain', host: 'allowed.test' }, echo.port);
    expect(socks.code).toBe(0);
    expect(await echoThrough(socks.socket, 'socks over unix')).toBe('socks over unix');
    socks.socket.destroy();
    const plain = await proxiedGet(endpoint, `http://allowed.test:${origin.port}/unix`);
    expect(JSON.parse(plain.body)).toMatchObject({ url: '/unix' });
    const denied = await proxiedGet(endpoint, `http://denied.test:${origin.port}/`);
    expect(denied.status).toBe(403);
    const deniedSocks = await socks5Request(endpoint, { type: 'domain', host: 'denied.test' }, echo.port);
    deniedSocks.socket.destroy();
    expect(deniedSocks.code).toBe(0x02);
    await proxy.close();
    expect(() => statSync(path)).toThrow(/ENOENT/);
    expect(events.map((event) => event.protocol)).toEqual(['https', 'socks5', 'http', 'http', 'socks5']);
  });

  it('refuses a path where something exists, and leaves it alone', async () => {
    const dir = tempDir('ux-proxy-');
    const path = join(dir, 'taken.sock');
    const first = createNetworkProxy({ policy });
    onTestFinished(() => first.close());
    await first.listenUnix(path);
    const second = createNetworkProxy({ policy });
    onTestFinished(() => second.close());
    await expect(second.listenUnix(path)).rejects.toMatchObject({
      name: 'NetworkProxyError',
      reason: 'socket_path_exists',
      path,
      message: expect.stringContaining('something already exists there'),
    });
    expect(statSync(path).isSocket()).toBe(true);
    // The first proxy still serves on it.
    const socks = await socks5Request({ path }, { type: 'ipv4', host: '127.0.0.1' }, echo.port);
    socks.socket.destroy();
    expect(socks.code).toBe(0x02);
  });

  it('refuses a path longer than a Unix socket address holds', async () => {
    const proxy = createNetworkProxy({ policy });
    onTestFinished(() => proxy.close());
    const path = `/tmp/${'x'.repeat(103)}`; // 108 bytes
    await expect(proxy.listenUnix(path)).rejects.toMatchObject({
      reason: 'socket_path_too_long',
      message: expect.stringContaining('108 bytes long; a Unix socket path holds at most 107'),
    });
    await expect(proxy.listenUnix(join(tempDir('ux-proxy-'), 'missing', 'proxy.sock'))).rejects.toMatchObject(
      {
        reason: 'listen_failed',
      },
    );
  });

  it('listens on loopback only, and not at all once closed', async () => {
    const proxy = createNetworkProxy({ policy });
    await expect(proxy.listenTcp({ host: '0.0.0.0' })).rejects.toMatchObject({ reason: 'invalid_option' });
    await expect(proxy.listenTcp({ port: 70000 })).rejects.toMatchObject({ reason: 'invalid_option' });
    await proxy.close();
    await expect(proxy.listenTcp()).rejects.toMatchObject({ reason: 'closed' });
    expect(() => createNetworkProxy({ policy: { allow: ['*'] } })).toThrow(
      'network.allow: "*" would allow every host',
    );
    expect(() => createNetworkProxy({ policy, connectTimeoutMs: 0 })).toThrow(
      'connectTimeoutMs must be a positive number',
    );
  });
});
