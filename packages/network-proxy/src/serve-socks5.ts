import type { Socket } from 'node:net';
import type { UpstreamError } from './connect-upstream.js';
import { normalizeHost } from './normalize-host.js';
import type { ProxyContext } from './proxy-context.js';
import { endAndLinger, watchWhileDeciding } from './socket-replies.js';
import {
  NO_ACCEPTABLE_METHODS,
  NO_AUTHENTICATION,
  parseSocksGreeting,
  parseSocksRequest,
  SocksCommand,
  SocksReply,
  socksReply,
} from './socks5.js';
import { tunnel } from './tunnel.js';

/**
 * One SOCKS5 client, from its greeting (`first` holds the bytes read so far) to the end of its tunnel.
 * No-authentication only; CONNECT only (BIND and UDP ASSOCIATE get 0x07). A malformed greeting closes
 * the connection; a malformed request gets 0x01, an unknown address type 0x08.
 */
export function serveSocks5(socket: Socket, first: Buffer, context: ProxyContext): void {
  let buffer = first;
  let stage: 'greeting' | 'request' | 'done' = 'greeting';
  const onData = (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    step();
  };
  // The client closed its side in the middle of the handshake: nothing will come of it.
  const onEnd = () => socket.destroy();
  const detach = () => {
    stage = 'done';
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.pause();
  };
  socket.on('data', onData);
  socket.once('end', onEnd);
  step();
  // step() may have finished the handshake already (the first read held all of it).
  if ((stage as string) !== 'done') socket.resume();

  function step(): void {
    if (stage === 'greeting') {
      const greeting = parseSocksGreeting(buffer);
      if (greeting.kind === 'incomplete') return;
      if (greeting.kind === 'invalid') {
        detach();
        socket.destroy();
        return;
      }
      buffer = greeting.rest;
      if (!greeting.methods.includes(NO_AUTHENTICATION)) {
        detach();
        endAndLinger(socket, Buffer.from([0x05, NO_ACCEPTABLE_METHODS]));
        return;
      }
      socket.write(Buffer.from([0x05, NO_AUTHENTICATION]));
      stage = 'request';
    }
    if (stage !== 'request') return;
    const parsed = parseSocksRequest(buffer);
    if (parsed.kind === 'incomplete') return;
    detach();
    const refusal = refusalFor(parsed);
    if (refusal !== undefined || parsed.kind !== 'ok') {
      endAndLinger(socket, socksReply(refusal ?? SocksReply.generalFailure));
      return;
    }
    const { request, rest } = parsed;
    const host = normalizeHost(request.host)!;
    context.handshakeDone(socket);
    void connect(socket, { host, port: request.port }, rest, context);
  }
}

async function connect(
  socket: Socket,
  target: Parameters<ProxyContext['begin']>[0],
  early: Buffer,
  context: ProxyContext,
): Promise<void> {
  const record = context.begin(target, 'socks5');
  const client = new AbortController();
  const release = watchWhileDeciding(socket, () => client.abort());
  const outcome = await context.establish(record, client.signal);
  const held = release();
  if (outcome.kind === 'cancelled') {
    socket.destroy();
    record.end();
    return;
  }
  if (outcome.kind === 'denied') {
    endAndLinger(socket, socksReply(SocksReply.notAllowedByRuleset));
    record.end();
    return;
  }
  if (outcome.kind === 'failed') {
    endAndLinger(socket, socksReply(replyCodeFor(outcome.error)));
    record.end();
    return;
  }
  const upstream = outcome.socket;
  socket.write(
    socksReply(SocksReply.succeeded, {
      address: upstream.localAddress ?? '0.0.0.0',
      port: upstream.localPort ?? 0,
    }),
  );
  if (early.length > 0) upstream.write(early);
  if (held.length > 0) upstream.write(held);
  const { error } = await tunnel(socket, upstream);
  if (error) record.error ??= error.message;
  record.end();
}

/** The reply code that refuses a request before any decision, or `undefined` for a CONNECT to a valid host. */
function refusalFor(parsed: ReturnType<typeof parseSocksRequest>): number | undefined {
  if (parsed.kind === 'bad_address_type') return SocksReply.addressTypeNotSupported;
  if (parsed.kind !== 'ok') return SocksReply.generalFailure;
  if (parsed.request.command !== SocksCommand.connect) return SocksReply.commandNotSupported;
  if (parsed.request.port === 0 || !normalizeHost(parsed.request.host)) return SocksReply.generalFailure;
  return undefined;
}

function replyCodeFor(error: UpstreamError): number {
  switch (error.failure) {
    case 'refused':
      return SocksReply.connectionRefused;
    case 'network_unreachable':
      return SocksReply.networkUnreachable;
    case 'resolve':
    case 'host_unreachable':
    case 'timeout':
      return SocksReply.hostUnreachable;
    case 'local_address':
      return SocksReply.notAllowedByRuleset;
    default:
      return SocksReply.generalFailure;
  }
}
