import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { didYouMean } from '@ux/protocol/core';
import {
  buildZshFork,
  locateZshFork,
  readBuildInfo,
  verifyZshFork,
  ZshForkBuildError,
  zshForkBuildHint,
  zshForkPatch,
} from '@ux/zsh-fork';
import { type CachedZshFork, findCachedZshFork, useZshForkLines } from './cached-zsh-fork.js';
import { configPaths, loadConfiguration } from './config-files.js';
import type { Io } from './io.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

export const ZSH_FORK_HELP = `Usage: ux zsh-fork <build|status> [options]

  build     build zsh 5.9 with ux's exec-wrapper patch, check it with a smoke test, install it
            (configure and make: a minute or two)
  status    where the patched zsh is, whether it works, and how to build it; when it is missing,
            also a fork that npm test built in ~/.cache/ux/zsh-fork, and how to use it

Options for build:
  --source DIR|TARBALL  zsh 5.9's source: a directory, a release tarball (.tar.xz, .tar.gz,
                        .tar.bz2) or a Debian .dsc; default: Debian's source package,
                        downloaded from the mirror apt uses (apt's configuration is only read)
  --out DIR             where to install (default $UX_HOME/zsh-fork); the binary is DIR/bin/zsh
  --verbose             show the build's output as it goes (otherwise only when it fails)

Options for status:
  --json                machine-readable output

  -h, --help            this help

ZshFork mode uses zsh_fork.zsh_path from $UX_HOME/config.toml when set, else $UX_HOME/zsh-fork/bin/zsh.
Exit codes: 0 success (status: the fork is usable), 1 failure (status: missing or unusable), 2 usage
error.
`;

const HELP_COMMAND = 'ux zsh-fork --help';
const SUBCOMMANDS = ['build', 'status'];

export async function zshForkCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    io.stderr(ZSH_FORK_HELP);
    return 2;
  }
  if (sub === '-h' || sub === '--help') {
    io.stdout(ZSH_FORK_HELP);
    return 0;
  }
  if (sub === 'build') return await build(rest, io);
  if (sub === 'status') return await status(rest, io);
  throw new UsageError(
    `unknown zsh-fork command "${sub}"${didYouMean(sub, SUBCOMMANDS)}; expected ${SUBCOMMANDS.join(' or ')}`,
    HELP_COMMAND,
  );
}

async function build(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    {
      source: { type: 'string' },
      out: { type: 'string' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP_COMMAND,
    { commandLine: 'ux zsh-fork build' },
  );
  if (values.help) {
    io.stdout(ZSH_FORK_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, HELP_COMMAND);
  if (values.source === '') throw new UsageError('--source needs a path', HELP_COMMAND);
  if (values.out === '') throw new UsageError('--out needs a path', HELP_COMMAND);
  const outDir = values.out
    ? resolve(values.out)
    : locateZshFork({ uxHome: configPaths(io.env).home }).defaultOutDir;

  const log: string[] = [];
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const started = Date.now();
  try {
    const result = await buildZshFork({
      ...(values.source === undefined ? {} : { source: values.source }),
      outDir,
      signal: controller.signal,
      onStep: (step) => io.stderr(`ux zsh-fork: ${step}\n`),
      onLog: (line) => {
        log.push(line);
        if (values.verbose) io.stderr(`${line}\n`);
      },
    });
    const seconds = Math.round((Date.now() - started) / 1000);
    io.stdout(
      `${result.zshPath}\nsmoke test: passed (zsh ${result.info.zshVersion}: EXEC_WRAPPER saw /bin/echo as $1; nothing intercepted without it)\nbuilt in ${seconds} s from ${result.info.source}\n`,
    );
    return 0;
  } catch (error) {
    if (!ZshForkBuildError.isInstance(error)) throw error;
    const logFile = saveLog(outDir, log);
    io.stderr(`ux: ${error.message}\n${logFile ? `full build log: ${logFile}\n` : ''}`);
    return error.reason === 'aborted' ? 130 : 1;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/** The whole build output, kept for a failed build; undefined when nothing ran or it cannot be written. */
function saveLog(outDir: string, log: readonly string[]): string | undefined {
  if (log.length === 0) return undefined;
  try {
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, 'build.log');
    writeFileSync(file, `${log.join('\n')}\n`);
    return file;
  } catch {
    return undefined;
  }
}

/** What status says about a fork found in the test cache, and how to use it when it works. */
function foundLines(cached: CachedZshFork, configFile: string): string[] {
  if (!cached.usable)
    return [`found: ${cached.path}, built by npm test, but it is not usable: ${cached.reason}`];
  return [
    `found: ${cached.path}, built by npm test: usable (zsh ${cached.version}; the exec-wrapper smoke test passed; patch current)`,
    `to use it, add to ${configFile}:`,
    ...useZshForkLines(cached.path),
    '  (that cache is rebuilt under a new name when the patch changes; ux zsh-fork build installs a copy of your own)',
  ];
}

async function status(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    HELP_COMMAND,
    { commandLine: 'ux zsh-fork status' },
  );
  if (values.help) {
    io.stdout(ZSH_FORK_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, HELP_COMMAND);
  const configuration = loadConfiguration(io.env);
  const location = locateZshFork({
    uxHome: configuration.paths.home,
    configured: configuration.user?.zshFork?.zshPath,
  });
  const hint = zshForkBuildHint({
    platform: io.platform,
    debian: existsSync('/etc/debian_version'),
    root: process.getuid?.() === 0,
  });
  const verified = location.exists ? await verifyZshFork(location.path, { buildCommand: hint }) : undefined;
  const info = readBuildInfo(location.buildDir);
  const currentPatch = zshForkPatch().sha256;
  const patchCurrent = info ? info.patchSha256 === currentPatch : undefined;
  const usable = verified?.ok === true;
  // Not usable where ux looks: perhaps `npm test` built one in ~/.cache/ux/zsh-fork.
  const cached = usable ? undefined : await findCachedZshFork(io.env, location.path);
  const origin =
    location.origin === 'configured'
      ? 'zsh_fork.zsh_path in config.toml'
      : 'default location, $UX_HOME/zsh-fork';

  if (values.json) {
    io.stdout(
      `${JSON.stringify(
        {
          path: location.path,
          origin: location.origin,
          exists: location.exists,
          usable,
          ...(verified?.ok ? { version: verified.version } : {}),
          ...(verified && !verified.ok ? { reason: verified.reason, fix: verified.fix } : {}),
          ...(location.exists ? {} : { reason: `no patched zsh at ${location.path}`, fix: hint }),
          ...(info ? { buildInfo: info, patchCurrent } : {}),
          ...(cached ? { found: { ...cached, origin: 'test-cache' } } : {}),
          build: hint,
        },
        null,
        2,
      )}\n`,
    );
    return usable ? 0 : 1;
  }
  const lines = [`patched zsh: ${location.path} (${origin})`];
  const cachedText = cached ? foundLines(cached, configuration.paths.userConfig) : [];
  if (!location.exists) {
    lines.push('status: missing', ...cachedText, `${cached?.usable ? 'or build' : 'to build'} it: ${hint}`);
  } else if (verified && !verified.ok) {
    lines.push(`status: not usable: ${verified.reason}`, ...cachedText, `fix: ${verified.fix}`);
  } else if (verified?.ok) {
    lines.push(`status: usable (zsh ${verified.version}; the exec-wrapper smoke test passed)`);
  }
  if (info) {
    lines.push(
      `built: ${info.builtAt} from ${info.source}`,
      patchCurrent
        ? `patch: current (sha256 ${currentPatch.slice(0, 12)})`
        : `patch: built from an older patch (sha256 ${info.patchSha256.slice(0, 12)}, now ${currentPatch.slice(0, 12)}); rebuild: ${hint}`,
    );
  }
  io.stdout(`${lines.join('\n')}\n`);
  return usable ? 0 : 1;
}
