import { UxError } from '@ux/protocol/core';

/**
 * The loopback port a sandbox offers the host's proxy on, inside the command's own network namespace
 * (Linux). The namespace is private, so a fixed port never clashes with anything of the host's.
 */
export const PROXY_BRIDGE_PORT = 3128;

export interface ProxyEnvironmentOptions {
  /** Where HTTP clients reach the proxy (inside the sandbox: the bridge's loopback port). */
  httpPort: number;
  /** Where SOCKS5 clients reach it; the same port as `httpPort` when absent (one listener serves both). */
  socksPort?: number;
  /** Adds macOS-only variables (`GIT_SSH_COMMAND` through BSD `nc`) for `darwin`; default: this process's platform. */
  platform?: NodeJS.Platform;
}

/**
 * Hosts that clients reach without the proxy: the sandbox's own loopback only. sandbox-runtime also
 * lists `.local` and the private ranges, but from inside the sandbox nothing else has a route, so a
 * client told to skip the proxy for `10.0.0.5` or `printer.local` could never reach them, even when the
 * allow list names them. Through the proxy, the allow list decides.
 */
export const NO_PROXY_HOSTS = 'localhost,127.0.0.1,::1';

/**
 * The variables that point a sandboxed command's clients at the proxy, as sandbox-runtime sets them
 * (docs/network-proxy.md). The host is `127.0.0.1`, not `localhost`: inside the sandbox the bridge
 * listens on IPv4 loopback, and `localhost` may resolve to `::1` first (Debian's /etc/hosts lists both;
 * Node and Go try the first answer), which would find nothing listening; `127.0.0.1` also needs no name
 * resolution, which an unshared network namespace may not have. `NODE_USE_ENV_PROXY` makes Node's own
 * `fetch` and `http` use them (Node 24 and 22.21 on; older Node ignores it). Pure: no process state
 * read except the default platform.
 */
export function proxyEnvironment(options: ProxyEnvironmentOptions): Record<string, string> {
  const httpPort = checkPort('httpPort', options.httpPort);
  const socksPort = checkPort('socksPort', options.socksPort ?? options.httpPort);
  const platform = options.platform ?? process.platform;
  const http = `http://127.0.0.1:${httpPort}`;
  const socks = `socks5h://127.0.0.1:${socksPort}`;
  const environment: Record<string, string> = {
    NO_PROXY: NO_PROXY_HOSTS,
    no_proxy: NO_PROXY_HOSTS,
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    FTP_PROXY: socks,
    GRPC_PROXY: socks,
    // rsync speaks HTTP CONNECT to RSYNC_PROXY (host:port, no scheme).
    RSYNC_PROXY: `127.0.0.1:${httpPort}`,
    DOCKER_HTTP_PROXY: http,
    DOCKER_HTTPS_PROXY: http,
    // gcloud's proxy/type names what the proxy speaks (it refuses "https"): CONNECT over HTTP.
    CLOUDSDK_PROXY_TYPE: 'http',
    CLOUDSDK_PROXY_ADDRESS: '127.0.0.1',
    CLOUDSDK_PROXY_PORT: String(httpPort),
    NODE_USE_ENV_PROXY: '1',
  };
  if (platform === 'darwin')
    environment.GIT_SSH_COMMAND = `ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:${socksPort} %h %p'`;
  return environment;
}

function checkPort(name: string, port: unknown): number {
  if (typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535) return port;
  throw new UxError(
    'invalid_arguments',
    `proxyEnvironment: ${name} must be a port number from 1 to 65535, got ${JSON.stringify(port) ?? String(port)}`,
  );
}
