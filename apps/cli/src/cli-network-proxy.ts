import { lookup } from 'node:dns/promises';
import { rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { ResolvedNetwork } from '@ux/config';
import {
  createNetworkProxy,
  type NetworkAsk,
  type NetworkConnectionEvent,
  type NetworkProxy,
  networkAccessEvent,
  type ResolveHost,
} from '@ux/network-proxy';
import { type NetworkAccessEvent, type NetworkProxyEndpoint, UxError } from '@ux/protocol/core';
import { createProcessRuntimeDir } from '@ux/protocol-utils';
import { TEST_HOSTS_VARIABLE } from './without-test-switches.js';

/** The longest Unix socket path (`sun_path` holds 108 bytes with its NUL). */

/** The session's allow-list proxy: where it listens, and how it ends. */
export interface CliNetworkProxy {
  /** For the session's `EffectivePolicy.networkProxy`. */
  endpoint: NetworkProxyEndpoint;
  /** The private (0700) directory holding the socket; removed by `close`. */
  directory: string;
  /**
   * Who answers about hosts in neither list (the orchestrator's `decideNetwork`). Until it is set,
   * and always when the policy says not to ask, such hosts are denied.
   */
  setAsk(ask: NetworkAsk): void;
  /** One event per exchange, when it ends. Returns the unsubscribe function. */
  onConnection(listener: (event: NetworkConnectionEvent) => void): () => void;
  /** The same, as the protocol's `network_access` events (for the door's listeners). */
  onAccess(listener: (event: NetworkAccessEvent) => void): () => void;
  /** Stops the proxy (every connection through it ends) and removes its directory. Idempotent. */
  close(): Promise<void>;
}

export interface CliNetworkProxyOptions {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  onWarning: (message: string) => void;
}

/**
 * Starts the one proxy of a session whose network is by domain: on a Unix socket in a new private
 * directory under the system's temporary directory (`/tmp` when that path would be too long for a
 * socket), and on macOS also on a loopback port (Seatbelt can only let a command reach a port). The
 * lists are the resolved ones; hosts in neither are asked about through `setAsk` unless the policy
 * pins "no questions". A failure on the way leaves nothing behind.
 */
export async function startCliNetworkProxy(
  network: ResolvedNetwork,
  options: CliNetworkProxyOptions,
): Promise<CliNetworkProxy> {
  const resolve = testResolver(options.env, options.onWarning);
  // In ux's per-user runtime directory, which every sandbox of every ux process hides: a command of
  // another session must not replace this socket (docs/threat-model.md).
  const directory = createProcessRuntimeDir('net');
  // In the same turn as the directory, so no signal can come between them.
  const unguard = guardDirectory(directory);
  let ask: NetworkAsk | undefined;
  let proxy: NetworkProxy | undefined;
  const removeDirectory = () => rmSync(directory, { recursive: true, force: true });
  try {
    proxy = createNetworkProxy({
      policy: {
        allow: network.allow.map((entry) => entry.pattern),
        deny: network.deny.map((entry) => entry.pattern),
        // An approval may not reach past the administrator's list: outside it, no question is asked.
        ...(network.cap?.mode === 'domains' ? { askable: network.cap.allow } : {}),
      },
      ...(network.askUnknown.value
        ? { ask: (request, settings) => (ask ? ask(request, settings) : 'deny') }
        : {}),
      // The test's names point at its own loopback servers: an approved one must reach them too.
      ...(resolve ? { resolve, allowLocalAddresses: true } : {}),
    });
    const unixSocket = join(directory, 'proxy.sock');
    await proxy.listenUnix(unixSocket);
    const loopbackPort = options.platform === 'darwin' ? await proxy.listenTcp({ port: 0 }) : undefined;
    const running = proxy;
    let closing: Promise<void> | undefined;
    return {
      endpoint: { unixSocket, ...(loopbackPort === undefined ? {} : { loopbackPort }) },
      directory,
      setAsk: (answer) => {
        ask = answer;
      },
      onConnection: (listener) => running.onConnection(listener),
      onAccess: (listener) => running.onConnection((event) => listener(networkAccessEvent(event))),
      close: () => {
        closing ??= running.close().finally(() => {
          unguard();
          removeDirectory();
        });
        return closing;
      },
    };
  } catch (error) {
    await proxy?.close().catch(() => undefined);
    unguard();
    removeDirectory();
    throw error;
  }
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Removes the directory if ux ends before `close`: at exit, and on a stop signal that nobody else
 * handles yet (one arriving while the session starts, before the command installs its own handlers,
 * which end the session and close the proxy). Such a signal is raised again once the directory is
 * gone, so ux still ends by it. Returns the function that removes the guard.
 */
function guardDirectory(directory: string): () => void {
  const remove = () => rmSync(directory, { recursive: true, force: true });
  const handlers = STOP_SIGNALS.map((signal) => {
    const handler = () => {
      if (process.listenerCount(signal) > 1) return;
      remove();
      unguard();
      process.kill(process.pid, signal);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  process.on('exit', remove);
  const unguard = () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
    process.off('exit', remove);
  };
  return unguard;
}

/** The resolver `UX_NETWORK_PROXY_HOSTS` asks for (tests only), or undefined when it is not set. */
function testResolver(env: NodeJS.ProcessEnv, onWarning: (message: string) => void): ResolveHost | undefined {
  const text = env[TEST_HOSTS_VARIABLE];
  if (text === undefined || text === '') return undefined;
  const hosts = new Map<string, string>();
  for (const pair of text.split(',')) {
    const [name, address, extra] = pair.split('=').map((part) => part.trim());
    if (!name || !address || extra !== undefined || isIP(address) === 0)
      throw new UxError(
        'config_error',
        `${TEST_HOSTS_VARIABLE}=${text}: expected name=ip[,name=ip…] (a switch for tests); "${pair}" is not one`,
      );
    hosts.set(name.toLowerCase(), address);
  }
  onWarning(
    `${TEST_HOSTS_VARIABLE} is set: the network proxy resolves ${[...hosts]
      .map(([name, address]) => `${name} to ${address}`)
      .join(', ')} and connects approved names to local addresses (a switch for tests; unset it otherwise)`,
  );
  return async (host) => {
    const mapped = hosts.get(host);
    if (mapped) return [mapped];
    return (await lookup(host, { all: true })).map((entry) => entry.address);
  };
}
