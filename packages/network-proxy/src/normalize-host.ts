import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';

export type HostKind = 'name' | 'ipv4' | 'ipv6';

/** A host in the one spelling the policy compares and the proxy connects to. */
export interface NormalizedHost {
  /** Lower case, no trailing dot, IDNA names in punycode, IPv6 without brackets in canonical form. */
  host: string;
  kind: HostKind;
}

// ASCII letters, digits, dot, hyphen, underscore; anything beyond ASCII is left to IDNA, which maps or
// refuses it. Everything else (spaces, `@`, `/`, `%`, `:`, control characters) makes the host invalid.
const HOST_CHARACTERS = /^[A-Za-z0-9._\-\u0080-\uffff]+$/;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The canonical form of a host as a client named it (HTTP request target, CONNECT authority, SOCKS5
 * address), or `undefined` when it is not a host name or an IP address.
 *
 * - Case is folded and one trailing dot dropped (`Example.ORG.` → `example.org`); IDNA names become
 *   punycode (`bücher.de` → `xn--bcher-kva.de`).
 * - IPv4 is parsed the way the WHATWG URL parser (and `inet_aton`) reads it, so `127.1`, `0x7f.0.0.1`
 *   and `2130706433` are all `127.0.0.1`: a spelling cannot slip past a list entry for the address.
 * - IPv6 is compressed (`0:0::1` → `::1`); IPv4-mapped IPv6 (`::ffff:10.0.0.1`) becomes the IPv4
 *   address it reaches. Zone ids (`fe80::1%eth0`) are refused.
 */
export function normalizeHost(input: string): NormalizedHost | undefined {
  let raw = input;
  const bracketed = raw.startsWith('[') && raw.endsWith(']');
  if (bracketed) raw = raw.slice(1, -1);
  if (bracketed || raw.includes(':')) return normalizeIPv6(raw);
  if (raw.length === 0 || raw.length > 254 || !HOST_CHARACTERS.test(raw)) return undefined;
  if (raw.endsWith('.')) raw = raw.slice(0, -1);
  if (raw.length === 0 || raw.startsWith('.') || raw.endsWith('.') || raw.includes('..')) return undefined;
  const ascii = domainToASCII(raw);
  if (ascii === '') return undefined;
  if (isIPv4(ascii)) return { host: ascii, kind: 'ipv4' };
  if (ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (!labels.every((label) => LABEL.test(label))) return undefined;
  // A name whose last label is all digits would have been read as IPv4 above; anything left is not a name.
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return undefined;
  return { host: ascii, kind: 'name' };
}

function normalizeIPv6(raw: string): NormalizedHost | undefined {
  if (!isIPv6(raw)) return undefined;
  let canonical: string;
  try {
    canonical = new URL(`http://[${raw}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const mapped = MAPPED_IPV4.exec(canonical);
  if (mapped) {
    const high = Number.parseInt(mapped[1]!, 16);
    const low = Number.parseInt(mapped[2]!, 16);
    return { host: `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`, kind: 'ipv4' };
  }
  return { host: canonical, kind: 'ipv6' };
}

/** `host:port` for messages, with IPv6 in brackets. */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
