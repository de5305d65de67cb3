import { readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

// Start-up time is most of a short command's cost, so the CLI ships bundles, not the ux packages'
// own builds: Node's ESM loader costs about a millisecond per module here, and a bundle built from
// the packages' sources (`@ux/source` export condition) keeps only what the command uses, e.g.
// `ux exec` carries no exec-server wire schemas.
//
// - `ux.js` parses the command line and imports one command bundle on demand.
// - Each command is one self-contained file (no shared chunks: esbuild's chunking would pull
//   unused schemas into shared chunks). Nothing with identity or state is shared between `ux.js`
//   and a command: errors are recognised by `Symbol.for` markers.
// - Packages with native code, WebAssembly, files beside their modules, or their own start-up
//   (node-pty, the bash grammar, ws, the MCP SDK, the Windows token backend and its launcher) stay
//   external and are loaded from node_modules; the CLI declares them itself, at the versions of the
//   ux packages that use them (checked below).
const commands = [
  'doctor-command',
  'exec-command',
  'exec-server-command',
  'features-command',
  'mcp-command',
  'sandbox-command',
];
const external = [
  'node-pty',
  'web-tree-sitter',
  'tree-sitter-bash',
  'ws',
  '@modelcontextprotocol/sdk',
  '@ux/sandbox-windows-token',
];

assertExternalVersions();

const shared: Options = {
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  splitting: false,
  // Every ux package but the Windows backend, whose launcher is a file beside its module.
  noExternal: [/^@ux\/(?!sandbox-windows-token$)/, 'zod'],
  external,
  esbuildOptions(options) {
    options.conditions = ['@ux/source'];
  },
};

export default defineConfig([
  {
    ...shared,
    entry: { ux: 'src/ux.ts' },
    clean: true,
    banner: { js: '#!/usr/bin/env node' },
    // The command bundles, imported by path at run time.
    external: [...external, /^\.\/[a-z-]+-command\.js$/],
  },
  {
    ...shared,
    entry: Object.fromEntries(commands.map((name) => [name, `src/${name}.ts`])),
  },
]);

/** Fails the build when the CLI's version of an external differs from a ux package's. */
function assertExternalVersions(): void {
  const read = (path: string) =>
    JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
    };
  const cli = read('./package.json');
  for (const name of ['spawn', 'orchestrator', 'exec-server', 'sandbox-windows-token']) {
    const pkg = read(`../../packages/${name}/package.json`);
    for (const [dependency, version] of Object.entries(pkg.dependencies ?? {})) {
      if (!external.includes(dependency) || dependency.startsWith('@ux/')) continue;
      if (cli.dependencies?.[dependency] !== version) {
        throw new Error(
          `apps/cli/package.json must depend on ${dependency}@${version} like ${pkg.name} (it is loaded from node_modules by the CLI's bundles), found ${cli.dependencies?.[dependency] ?? 'none'}`,
        );
      }
    }
  }
}
