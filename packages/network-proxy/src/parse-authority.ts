import { type NormalizedHost, normalizeHost } from './normalize-host.js';

/** A destination named by a client. */
export interface ProxyTarget {
  host: NormalizedHost;
  port: number;
}

/**
 * `host:port`, `[v6]:port`, or `host` with `defaultPort`, as in a CONNECT request or the authority of an
 * absolute URL (userinfo already removed). `undefined` when the host or the port is not valid.
 */
export function parseAuthority(text: string, defaultPort?: number): ProxyTarget | undefined {
  let hostText = text;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    hostText = text.slice(0, close + 1);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return undefined;
      portText = rest.slice(1);
    }
  } else {
    const colon = text.indexOf(':');
    if (colon >= 0) {
      if (text.indexOf(':', colon + 1) >= 0) return undefined; // IPv6 needs brackets here
      hostText = text.slice(0, colon);
      portText = text.slice(colon + 1);
    }
  }
  const port = portText === undefined || portText === '' ? defaultPort : parsePort(portText);
  if (port === undefined) return undefined;
  const host = normalizeHost(hostText);
  return host ? { host, port } : undefined;
}

function parsePort(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** An absolute-form request target (`http://host[:port]/path?query`), split for forwarding. */
export interface AbsoluteTarget extends ProxyTarget {
  /** The origin-form to send upstream: the path and query exactly as the client wrote them, `/` when empty. */
  path: string;
  /** The `Host` header to send upstream: the normalised host, with the port when it is not 80. */
  authority: string;
}

/**
 * Splits an HTTP proxy request target. Only `http://` absolute-form is forwarded; the answer for
 * anything else is a message for a 400.
 */
export function parseAbsoluteTarget(url: string): AbsoluteTarget | { error: string } {
  if (url.startsWith('/'))
    return {
      error: `ux: this is a proxy; it forwards absolute-form requests ("GET http://host/path") and tunnels CONNECT host:port, not ${JSON.stringify(truncate(url))}`,
    };
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (!match)
    return { error: `ux: the proxy could not read the request target ${JSON.stringify(truncate(url))}` };
  const scheme = match[1]!.toLowerCase();
  if (scheme !== 'http')
    return {
      error:
        scheme === 'https'
          ? 'ux: the proxy does not make TLS connections for clients; send CONNECT host:443 and speak TLS through the tunnel'
          : `ux: the proxy forwards http:// requests only, not ${scheme}://; tunnel other protocols with CONNECT or SOCKS5`,
    };
  const authority = match[2]!.slice(match[2]!.lastIndexOf('@') + 1);
  const target = parseAuthority(authority, 80);
  if (!target) return { error: `ux: ${JSON.stringify(truncate(authority))} is not a valid host and port` };
  const rest = match[3]!;
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  const host = target.host.kind === 'ipv6' ? `[${target.host.host}]` : target.host.host;
  return { ...target, path, authority: target.port === 80 ? host : `${host}:${target.port}` };
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
