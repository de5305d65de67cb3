// What the benchmarks that drive the built `ux` share: its path, a temporary UX_HOME, the MCP SDK.
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The CLI package's manifest, resolved by name (the benchmarks depend on `@ux/cli`). */
const CLI_MANIFEST = createRequire(import.meta.url).resolve('@ux/cli/package.json');

/** The CLI as users run it (build it first: `pnpm --filter @ux/cli build`). */
export const UX_BIN = join(dirname(CLI_MANIFEST), 'dist', 'ux.cjs');

/**
 * A HOME and UX_HOME with a workspace, outside /tmp (commands get a private /tmp), as the CLI's tests
 * make them, and the environment `ux` runs with. `tmp`: a TMPDIR of its own; `proxyHosts`: what
 * `UX_NETWORK_PROXY_HOSTS` maps (a test host to 127.0.0.1, say).
 */
export function makeUxHome(prefix, { tmp = false, proxyHosts } = {}) {
  const home = realpathSync(mkdtempSync(join('/var/tmp', prefix)));
  const workspace = join(home, 'workspace');
  mkdirSync(workspace);
  if (tmp) mkdirSync(join(home, 'tmp'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    UX_HOME: home,
    UX_REQUIREMENTS: join(home, 'requirements.toml'),
    SHELL: '/bin/bash',
    ...(tmp ? { TMPDIR: join(home, 'tmp') } : {}),
    ...(proxyHosts ? { UX_NETWORK_PROXY_HOSTS: proxyHosts } : {}),
  };
  return { home, workspace, env };
}

/** The official MCP SDK's client and stdio transport, as the CLI's tests use them (apps/cli depends on it). */
export async function loadMcpClient() {
  const fromCli = createRequire(CLI_MANIFEST);
  const sdk = (path) => import(pathToFileURL(fromCli.resolve(`@modelcontextprotocol/sdk/${path}`)).href);
  const { Client } = await sdk('client/index.js');
  const { StdioClientTransport } = await sdk('client/stdio.js');
  return { Client, StdioClientTransport };
}
