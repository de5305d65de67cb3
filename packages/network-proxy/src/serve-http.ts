import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, request } from 'node:http';
import type { Socket } from 'node:net';
import type { UpstreamError } from './connect-upstream.js';
import type { ConnectionRecord } from './connection-record.js';
import { type AbsoluteTarget, parseAbsoluteTarget, parseAuthority } from './parse-authority.js';
import type { EstablishOutcome, ProxyContext } from './proxy-context.js';
import { endAndLinger, rawTextResponse, watchWhileDeciding } from './socket-replies.js';
import { tunnel, whenClosed } from './tunnel.js';

/**
 * The start of a refusal's reason phrase, followed by the host and why (`briefDenial`): clients that
 * print only the status line (Python's "Tunnel connection failed: 403 …") still say who refused, which
 * host and why, and the door's denial heuristic recognises it.
 */
export const BLOCKED_REASON = 'Blocked by ux network policy';

/** The `X-Proxy-Error` value of a refusal, as sandbox-runtime sends it. */
export const BLOCKED_HEADER_VALUE = 'blocked-by-allowlist';

/** The header that carries a refusal's code and host: `X-Ux-Denied: not_in_allow_list; host=example.com`. */
export const DENIED_HEADER = 'X-Ux-Denied';

type Denied = Extract<EstablishOutcome, { kind: 'denied' }>;

/** The status line's reason phrase and the extra header of a refusal. */
function refusalParts(outcome: Denied): { reason: string; header: string } {
  return { reason: `${BLOCKED_REASON}: ${outcome.brief}`, header: `${outcome.denial}; host=${outcome.host}` };
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own: never passed on.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The HTTP half of the mux: an `http.Server` that never listens; the proxy hands it the connections
 * whose first byte is not SOCKS. Node's parser reads the requests (keep-alive, pipelining, chunked
 * bodies, malformed input). Each plain request is decided on its own; CONNECT and upgrades become
 * tunnels.
 */
export function createHttpFrontEnd(context: ProxyContext): Server {
  const server = createServer({
    // The proxy reads the destination from the request target, not from Host.
    requireHostHeader: false,
    // A forwarded upload may take as long as it takes; the proxy's own handshake timer covers idle clients.
    requestTimeout: 0,
    headersTimeout: 0,
    keepAliveTimeout: 5_000,
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    context.handshakeDone(req.socket);
    void forwardRequest(req, res, context);
  });
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    context.handshakeDone(socket);
    void connectTunnel(req, socket, head, context);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    context.handshakeDone(socket);
    void upgradeTunnel(req, socket, head, context);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET' || error.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    endAndLinger(
      socket,
      rawTextResponse(
        tooLarge ? 431 : 400,
        tooLarge ? 'Request Header Fields Too Large' : 'Bad Request',
        `ux: the proxy could not read this request (${error.code ?? error.message}); it takes HTTP/1.1 proxy requests ("GET http://host/path", "CONNECT host:port") and SOCKS5`,
        'bad-request',
      ),
    );
  });
  return server;
}

function statusFor(error: UpstreamError): [number, string] {
  return error.failure === 'timeout' ? [504, 'Gateway Timeout'] : [502, 'Bad Gateway'];
}

function proxyErrorFor(error: UpstreamError): string {
  return error.failure === 'resolve' ? 'upstream-resolve-failed' : 'upstream-connect-failed';
}

function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  proxyError: string,
  denied?: Denied,
): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const text = `${body}\n`;
  const refusal = denied ? refusalParts(denied) : undefined;
  res.writeHead(status, refusal?.reason, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Proxy-Error': proxyError,
    ...(refusal ? { [DENIED_HEADER]: refusal.header } : {}),
  });
  res.end(text);
}

async function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context: ProxyContext,
): Promise<void> {
  req.on('error', () => {});
  const target = parseAbsoluteTarget(req.url ?? '');
  if ('error' in target) {
    sendText(res, 400, target.error, 'bad-request');
    return;
  }
  const record = context.begin(target, 'http');
  const client = new AbortController();
  const gone = () => client.abort();
  res.once('close', gone);
  const outcome = await context.establish(record, client.signal);
  res.off('close', gone);
  if (outcome.kind !== 'connected') {
    if (outcome.kind === 'denied') sendText(res, 403, outcome.message, BLOCKED_HEADER_VALUE, outcome);
    else if (outcome.kind === 'failed') {
      const [status] = statusFor(outcome.error);
      sendText(res, status, `ux: ${outcome.error.message}`, proxyErrorFor(outcome.error));
    } else res.destroy();
    record.end();
    return;
  }
  await forward(req, res, outcome.socket, target, record);
  record.end();
}

/** Sends one request over a fresh upstream connection (closed after the response) and relays the response. */
async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  upstream: Socket,
  target: AbsoluteTarget,
  record: ConnectionRecord,
): Promise<void> {
  const headers: string[] = ['Host', target.authority];
  const named = connectionTokens(req.rawHeaders);
  forEachHeader(req.rawHeaders, (name, value, lower) => {
    if (lower === 'host' || HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named.has(lower)) return;
    headers.push(name, value);
  });
  // The client's chunked body is decoded by the parser; send it chunked again.
  if (/\bchunked\b/i.test(String(req.headers['transfer-encoding'] ?? '')))
    headers.push('Transfer-Encoding', 'chunked');
  // One request per upstream connection: the exchange (and its byte counts) ends with the response.
  headers.push('Connection', 'close');
  const responded = new Promise<void>((resolve) => {
    if (res.writableFinished || res.destroyed) resolve();
    res.once('finish', resolve);
    res.once('close', resolve);
  });
  const outgoing = request({
    method: req.method,
    path: target.path,
    headers,
    setHost: false,
    createConnection: () => upstream,
  });
  outgoing.on('response', (incoming) => {
    incoming.on('error', (error) => {
      record.error ??= error.message;
      res.destroy();
    });
    if (res.destroyed) {
      outgoing.destroy();
      return;
    }
    const responseNamed = connectionTokens(incoming.rawHeaders);
    const responseHeaders: string[] = [];
    forEachHeader(incoming.rawHeaders, (name, value, lower) => {
      if (HOP_BY_HOP.has(lower) || responseNamed.has(lower)) return;
      responseHeaders.push(name, value);
    });
    res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, responseHeaders);
    incoming.pipe(res);
  });
  outgoing.on('error', (error) => {
    if (res.destroyed) return; // the client went away first; that is not the destination's failure
    record.error ??= error.message;
    sendText(
      res,
      502,
      `ux: the connection to ${target.authority} failed: ${error.message}`,
      'upstream-failed',
    );
  });
  res.once('close', () => {
    if (!res.writableFinished) outgoing.destroy();
    // The response is complete (or abandoned): this connection has carried its one request.
    upstream.destroy();
  });
  req.pipe(outgoing);
  await Promise.all([responded, whenClosed(upstream)]);
}

async function connectTunnel(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  context: ProxyContext,
): Promise<void> {
  claimForTunnel(socket);
  const target = parseAuthority(req.url ?? '');
  if (!target) {
    endAndLinger(
      socket,
      rawTextResponse(
        400,
        'Bad Request',
        `ux: CONNECT needs host:port, got ${JSON.stringify((req.url ?? '').slice(0, 200))}`,
        'bad-request',
      ),
    );
    return;
  }
  await tunnelTo(socket, head, context.begin(target, 'https'), context, () =>
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n'),
  );
}

/** An HTTP upgrade (WebSocket over plain `ws://`): the request goes upstream as it came, then both ways raw. */
async function upgradeTunnel(
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
  context: ProxyContext,
): Promise<void> {
  claimForTunnel(socket);
  const target = parseAbsoluteTarget(req.url ?? '');
  if ('error' in target) {
    endAndLinger(socket, rawTextResponse(400, 'Bad Request', target.error, 'bad-request'));
    return;
  }
  const lines = [`${req.method} ${target.path} HTTP/${req.httpVersion}`, `Host: ${target.authority}`];
  forEachHeader(req.rawHeaders, (name, value, lower) => {
    if (lower === 'host' || lower === 'keep-alive' || lower.startsWith('proxy-')) return;
    lines.push(`${name}: ${value}`);
  });
  const requestHead = `${lines.join('\r\n')}\r\n\r\n`;
  await tunnelTo(socket, head, context.begin(target, 'http'), context, (upstream) =>
    upstream.write(requestHead),
  );
}

async function tunnelTo(
  socket: Socket,
  head: Buffer,
  record: ConnectionRecord,
  context: ProxyContext,
  opened: (upstream: Socket) => void,
): Promise<void> {
  const client = new AbortController();
  const release = watchWhileDeciding(socket, () => client.abort());
  const outcome = await context.establish(record, client.signal);
  const held = release();
  if (outcome.kind === 'connected') {
    const upstream = outcome.socket;
    opened(upstream);
    if (head.length > 0) upstream.write(head);
    if (held.length > 0) upstream.write(held);
    const { error } = await tunnel(socket, upstream);
    if (error) record.error ??= error.message;
  } else if (outcome.kind === 'denied') {
    const { reason, header } = refusalParts(outcome);
    endAndLinger(
      socket,
      rawTextResponse(403, reason, outcome.message, BLOCKED_HEADER_VALUE, [`${DENIED_HEADER}: ${header}`]),
    );
  } else if (outcome.kind === 'failed') {
    const [status, reason] = statusFor(outcome.error);
    endAndLinger(
      socket,
      rawTextResponse(status, reason, `ux: ${outcome.error.message}`, proxyErrorFor(outcome.error)),
    );
  } else socket.destroy();
  record.end();
}

function forEachHeader(raw: string[], visit: (name: string, value: string, lower: string) => void): void {
  for (let index = 0; index + 1 < raw.length; index += 2)
    visit(raw[index]!, raw[index + 1]!, raw[index]!.toLowerCase());
}

/** Header names a `Connection` header lists: hop-by-hop for this message. */
function connectionTokens(raw: string[]): Set<string> {
  const tokens = new Set<string>();
  forEachHeader(raw, (_name, value, lower) => {
    if (lower !== 'connection') return;
    for (const token of value.split(',')) {
      const trimmed = token.trim().toLowerCase();
      if (trimmed) tokens.add(trimmed);
    }
  });
  return tokens;
}

/** Takes a connection out of the HTTP server's hands for a tunnel. */
function claimForTunnel(socket: Socket): void {
  socket.on('error', () => {});
  // The server's keep-alive timer may still be armed on this connection; a tunnel has no idle limit.
  socket.setTimeout(0);
}
