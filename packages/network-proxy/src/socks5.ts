// The SOCKS5 wire format (RFC 1928), the parts the proxy speaks: the no-authentication method and the
// CONNECT command. Pure functions over buffers; the session lives in serve-socks5.ts.

/** Reply codes (RFC 1928 §6). */
export const SocksReply = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowedByRuleset: 0x02,
  networkUnreachable: 0x03,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  ttlExpired: 0x06,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const;

export const SocksCommand = { connect: 0x01, bind: 0x02, udpAssociate: 0x03 } as const;

/** Method 0x00: no authentication required. 0xff: no acceptable methods. */
export const NO_AUTHENTICATION = 0x00;
export const NO_ACCEPTABLE_METHODS = 0xff;

export type SocksParse<T> =
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string }
  | ({ kind: 'ok'; rest: Buffer } & T);

/** The greeting: VER=5, NMETHODS, METHODS. */
export function parseSocksGreeting(buffer: Buffer): SocksParse<{ methods: number[] }> {
  if (buffer.length < 2) return { kind: 'incomplete' };
  if (buffer[0] !== 0x05) return { kind: 'invalid', reason: `version ${buffer[0]} is not SOCKS5` };
  const count = buffer[1]!;
  if (count === 0) return { kind: 'invalid', reason: 'the greeting offers no methods' };
  if (buffer.length < 2 + count) return { kind: 'incomplete' };
  return { kind: 'ok', methods: [...buffer.subarray(2, 2 + count)], rest: buffer.subarray(2 + count) };
}

export interface SocksRequest {
  command: number;
  /** Address type: 1 IPv4, 3 domain name, 4 IPv6. */
  addressType: 1 | 3 | 4;
  /** The address as text: dotted IPv4, the domain name as sent, or IPv6 in colon groups. */
  host: string;
  port: number;
}

/**
 * The request: VER=5, CMD, RSV, ATYP, DST.ADDR, DST.PORT. An unknown address type is `invalid` with
 * `addressType` set, so the caller can answer 0x08 instead of a general failure.
 */
export function parseSocksRequest(
  buffer: Buffer,
): SocksParse<{ request: SocksRequest }> | { kind: 'bad_address_type'; addressType: number } {
  if (buffer.length < 4) return { kind: 'incomplete' };
  if (buffer[0] !== 0x05) return { kind: 'invalid', reason: `request version ${buffer[0]} is not SOCKS5` };
  const command = buffer[1]!;
  const addressType = buffer[3]!;
  let host: string;
  let end: number;
  if (addressType === 0x01) {
    end = 4 + 4;
    if (buffer.length < end + 2) return { kind: 'incomplete' };
    host = [...buffer.subarray(4, 8)].join('.');
  } else if (addressType === 0x03) {
    if (buffer.length < 5) return { kind: 'incomplete' };
    const length = buffer[4]!;
    if (length === 0) return { kind: 'invalid', reason: 'the domain name is empty' };
    end = 5 + length;
    if (buffer.length < end + 2) return { kind: 'incomplete' };
    host = buffer.subarray(5, end).toString('utf8');
  } else if (addressType === 0x04) {
    end = 4 + 16;
    if (buffer.length < end + 2) return { kind: 'incomplete' };
    const groups: string[] = [];
    for (let offset = 4; offset < end; offset += 2) groups.push(buffer.readUInt16BE(offset).toString(16));
    host = groups.join(':');
  } else {
    return { kind: 'bad_address_type', addressType };
  }
  const port = buffer.readUInt16BE(end);
  return {
    kind: 'ok',
    request: { command, addressType: addressType as 1 | 3 | 4, host, port },
    rest: buffer.subarray(end + 2),
  };
}

/**
 * A reply: VER=5, REP, RSV, ATYP, BND.ADDR, BND.PORT. The bound address is the proxy's side of the
 * upstream connection when there is one; failures carry 0.0.0.0:0.
 */
export function socksReply(code: number, bound?: { address: string; port: number }): Buffer {
  if (bound?.address.includes(':')) {
    const reply = Buffer.alloc(4 + 16 + 2);
    reply.set([0x05, code, 0x00, 0x04]);
    writeIPv6(reply, 4, bound.address);
    reply.writeUInt16BE(bound.port, 20);
    return reply;
  }
  const reply = Buffer.alloc(4 + 4 + 2);
  reply.set([0x05, code, 0x00, 0x01]);
  if (bound) {
    const octets = bound.address.split('.').map(Number);
    if (octets.length === 4 && octets.every((octet) => octet >= 0 && octet <= 255)) reply.set(octets, 4);
    reply.writeUInt16BE(bound.port, 8);
  }
  return reply;
}

function writeIPv6(target: Buffer, offset: number, address: string): void {
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  // A dotted IPv4 tail (::ffff:1.2.3.4) takes two groups.
  const expand = (groups: string[]) =>
    groups.flatMap((group) => {
      if (!group.includes('.')) return [Number.parseInt(group, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  const leftGroups = expand(left);
  const rightGroups = expand(right);
  const groups = [
    ...leftGroups,
    ...new Array(8 - leftGroups.length - rightGroups.length).fill(0),
    ...rightGroups,
  ];
  groups.forEach((group, index) => {
    target.writeUInt16BE(group & 0xffff, offset + index * 2);
  });
}
