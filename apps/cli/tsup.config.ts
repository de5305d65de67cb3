import { readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

// Start-up time is most of a short command's cost, so the CLI ships bundles, not the ux packages'
// own builds: Node's ESM loader costs about a millisecond per module here, and a bundle built from
// the packages' sources (`@ux/source` export condition) keeps only what the command uses, e.g.
// `ux exec` carries no exec-server wire schemas.
//
// - `ux.cjs` parses the command line and requires one command bundle on demand.
// - Each command is one self-contained file (no shared chunks: esbuild's chunking would pull
//   unused schemas into shared chunks). Nothing with identity or state is shared between `ux.cjs`
//   and a command: errors are recognised by `Symbol.for` markers.
// - Packages with native code, WebAssembly, files beside their modules, or their own start-up
//   (node-pty, the bash grammar, ws, the MCP SDK, the Windows token backend and its launcher) stay
//   external and are loaded from node_modules; the CLI declares them itself, at the versions of the
//   ux packages that use them (checked below). So do the macOS and Windows backends: a Linux host
//   never parses their code.

// Commands whose code reaches the zod schemas of `@ux/protocol` only through `import()` (a call the
// quick checks cannot accept): for them the protocol's main entry stays out of the bundle and is loaded
// from its package when needed, so these start without a schema library. A static import of it in
// one of them would fail at load (`require` of an ES module), which the CLI's tests would show.
const leanCommands = [
  'apply-patch-command',
  'control-command',
  'approvals-command',
  'doctor-command',
  'exec-command',
  'features-command',
  'mcp-command',
  'sandbox-command',
  'zsh-fork-command',
];
// The exec-server validates every wire message with the schemas: they are bundled.
const fullCommands = ['exec-server-command'];
const external = [
  'node-pty',
  'web-tree-sitter',
  'tree-sitter-bash',
  'ws',
  '@modelcontextprotocol/sdk',
  '@ux/sandbox-seatbelt',
  '@ux/sandbox-windows-token',
];

assertExternalVersions();

const shared: Options = {
  // CommonJS: Node starts a CommonJS entry without initialising its ES module loader (about 8 ms
  // here), and `require` loads a command bundle without it too. ESM-only packages are still
  // reached with `import()` where the code asks for them (the MCP SDK is CommonJS-capable).
  format: ['cjs'],
  // `import.meta.url` of the bundled packages becomes the bundle's own URL.
  shims: true,
  target: 'node20',
  sourcemap: true,
  splitting: false,
  // Less to parse at every start; names stay, and the source maps map lines back.
  minifyWhitespace: true,
  minifySyntax: true,
  // Every ux package but the macOS and Windows backends, loaded from their packages on their
  // platforms only (the Windows launcher is a file beside its module).
  noExternal: [/^@ux\/(?!sandbox-(seatbelt|windows-token)$)/, 'zod'],
  external,
  esbuildOptions(options) {
    options.conditions = ['@ux/source'];
    // `import()` of an external becomes `require` (Node >= 20.19 requires ES modules): command bundles
    // are compiled through node:vm with a code cache (command-bundle.ts), where Node 20 cannot run
    // an `import()`.
    options.supported = { ...options.supported, 'dynamic-import': false };
  },
};

export default defineConfig([
  {
    ...shared,
    // write-code-caches: run after the build (package.json), V8's code cache for each command bundle.
    entry: { ux: 'src/ux.ts', 'write-code-caches': 'src/write-code-caches.ts' },
    banner: { js: '#!/usr/bin/env node' },
    // The command bundles, imported by path at run time.
    external: [...external, /^\.\/[a-z-]+-command\.cjs$/],
  },
  {
    ...shared,
    entry: Object.fromEntries(leanCommands.map((name) => [name, `src/${name}.ts`])),
    noExternal: [/^@ux\/(?!protocol$|sandbox-(seatbelt|windows-token)$)/, 'zod'],
    external: [...external, '@ux/protocol'],
  },
  {
    ...shared,
    entry: Object.fromEntries(fullCommands.map((name) => [name, `src/${name}.ts`])),
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
  for (const name of [
    'spawn',
    'exec-server-client',
    'orchestrator',
    'exec-server',
    'sandbox-windows-token',
  ]) {
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
