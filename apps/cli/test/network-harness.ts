// Shared by the network tests: a home whose ux maps test names to 127.0.0.1, and an HTTP server there.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { isAlive } from '@ux/protocol-testing';
import { runtimeDirPid, uxRuntimeRoot } from '@ux/protocol-utils';
import { onTestFinished } from 'vitest';
import { makeHome, type UxFiles, type UxHome } from './cli-harness.js';

export interface NetworkHome extends UxHome {
  /** The TMPDIR ux gets: its proxy's socket directory is made there. */
  tmp: string;
}

/** A home whose ux maps the test names to 127.0.0.1 and keeps its temporary files in `tmp`. */
export function networkHome(files: UxFiles = {}): NetworkHome {
  const home = makeHome(files);
  const tmp = join(home.home, 'tmp');
  mkdirSync(tmp);
  home.env.TMPDIR = tmp;
  home.env.UX_NETWORK_PROXY_HOSTS =
    'allowed.test=127.0.0.1,denied.test=127.0.0.1,other.test=127.0.0.1,secret.corp.test=127.0.0.1,build.corp.test=127.0.0.1';
  return { ...home, tmp };
}

/**
 * Proxy socket directories left behind: in ux's per-user runtime root (`net-PID-RANDOM`) by a ux that
 * has ended, or in the home's TMPDIR (where they used to be). A directory of a ux still running (another
 * test's) is not a leftover. With `pid`: that process's proxy directories, alive or not.
 */
export const proxyDirectories = (_home: NetworkHome, pid?: number) => {
  const root = uxRuntimeRoot();
  const names = existsSync(root) ? readdirSync(root) : [];
  const leftover = names.filter((name) => {
    const owner = name.startsWith('net-') ? runtimeDirPid(name) : undefined;
    return owner !== undefined && (pid === undefined ? !isAlive(owner) : owner === pid);
  });
  return [...leftover, ...readdirSync(_home.tmp).filter((name) => name.startsWith('ux-net-'))];
};

/**
 * An HTTP server on 127.0.0.1 answering `hello from HOST`; `hosts` records the Host of each request,
 * `requests` its `METHOD PATH HOST`.
 */
export async function httpServer() {
  const hosts: string[] = [];
  const requests: string[] = [];
  const server = createHttpServer((request, response) => {
    hosts.push(request.headers.host ?? '');
    requests.push(`${request.method} ${request.url} ${request.headers.host}`);
    response.end(`hello from ${request.headers.host}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const port = (server.address() as { port: number }).port;
  return { port, hosts, requests, url: (host: string) => `http://${host}:${port}/` };
}

export const CURL = 'curl -sS --max-time 10';
