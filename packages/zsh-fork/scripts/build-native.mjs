// Compiles the execve wrapper and the escalation broker (native/*.c; both include native/ux-json.c)
// into native/build/ with the system C compiler ($CC, else cc, gcc or clang). A binary newer than its
// sources is left alone. Without a compiler it says what to install; ZshFork cannot work without them.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Both programs use Linux system calls (O_PATH, accept4, pipe2, prctl): elsewhere there is nothing to
// build, and the package still installs (a macOS or Windows host of the CLI just has no ZshFork mode).
if (process.platform !== 'linux') process.exit(0);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const native = join(root, 'native');
const shared = [join(native, 'ux-json.c'), join(native, 'ux-execve-fast.c')];
// The wrapper runs once per exec of a ZshFork command: linked statically it starts without the dynamic
// loader (a measurable part of its cost) and needs no library inside a sandbox. Where static linking
// is not available (no libc.a), it is linked like the broker. On x86_64 Linux it first gets its fast
// path (native/ux-execve-fast.c): an entry point that asks the broker and executes a Run answer before
// glibc starts at all (raw system calls), falling through to glibc's _start for everything else.
const fast =
  process.platform === 'linux' && process.arch === 'x64'
    ? [
        [
          '-static',
          '-no-pie',
          '-DUX_FAST_START',
          '-Wl,-e,ux_fast_start',
          '-fno-tree-loop-distribute-patterns',
        ],
      ]
    : [];
const programs = [
  { name: 'ux-execve-wrapper', flags: [...fast, ['-static'], []], check: checkWrapper },
  { name: 'ux-escalate-broker', flags: [[]] },
];

const candidates = [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean);
let failed = false;
for (const { name, flags, check } of programs) {
  const source = join(native, `${name}.c`);
  const output = join(native, 'build', name);
  if (upToDate(output, [source, ...shared])) continue;
  mkdirSync(dirname(output), { recursive: true });
  const errors = [];
  let built = false;
  for (const compiler of candidates) {
    for (const extra of flags) {
      const temporary = `${output}.${process.pid}`;
      try {
        execFileSync(compiler, ['-O2', '-Wall', '-Wextra', ...extra, '-o', temporary, source], {
          stdio: ['ignore', 'inherit', 'pipe'],
        });
        check?.(temporary);
        renameSync(temporary, output);
        built = true;
        break;
      } catch (error) {
        errors.push(
          `${[compiler, ...extra].join(' ')}: ${error.code === 'ENOENT' ? 'not found' : String(error.stderr ?? error.message).trim()}`,
        );
        if (error.code === 'ENOENT') break;
      }
    }
    if (built) break;
  }
  if (!built) {
    failed = true;
    console.error(
      `@ux/zsh-fork: cannot compile ${source}:\n  ${errors.join('\n  ')}\nInstall a C compiler (e.g. apt-get install build-essential) and rebuild (pnpm --filter @ux/zsh-fork build).`,
    );
  }
}
process.exit(failed ? 1 : 0);

/**
 * The built wrapper must start and refuse to run anything without its socket (through the fast
 * entry point, when built with it, into main): a build whose start-up is broken is not installed.
 */
function checkWrapper(path) {
  const result = spawnSync(path, ['/bin/true', 'true'], { env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
  if (result.status !== 1 || !result.stderr.includes('UX_ESCALATE_SOCKET is not set')) {
    rmSync(path, { force: true });
    throw Object.assign(
      new Error(`the built wrapper does not start (${result.signal ?? result.status}): ${result.stderr}`),
      {
        stderr: `the built wrapper does not start (${result.signal ?? `exit ${result.status}`}) ${result.stderr ?? ''}`,
      },
    );
  }
}

function upToDate(output, sources) {
  if (!existsSync(output)) return false;
  const built = statSync(output).mtimeMs;
  return sources.every((source) => statSync(source).mtimeMs <= built);
}
