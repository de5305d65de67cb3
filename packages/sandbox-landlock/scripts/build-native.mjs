// Compiles native/ux-landlock-exec.c into native/build/ with the system C compiler ($CC, else cc, gcc
// or clang). Skips it when the binary is newer than its source, and skips everything off Linux
// (Landlock is Linux only). Without the launcher the backend reports itself unavailable and says how
// to build it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.platform !== 'linux') process.exit(0);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = 'ux-landlock-exec';
const candidates = [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean);
const source = join(root, 'native', `${name}.c`);
const output = join(root, 'native', 'build', name);
if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) process.exit(0);
mkdirSync(dirname(output), { recursive: true });
const errors = [];
for (const compiler of candidates) {
  const temporary = `${output}.${process.pid}`;
  try {
    execFileSync(compiler, ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-o', temporary, source], {
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    renameSync(temporary, output);
    process.exit(0);
  } catch (error) {
    rmSync(temporary, { force: true });
    errors.push(
      `${compiler}: ${error.code === 'ENOENT' ? 'not found' : String(error.stderr ?? error.message).trim()}`,
    );
  }
}
console.error(
  `@ux/sandbox-landlock: cannot compile ${source}:\n  ${errors.join('\n  ')}\nInstall a C compiler (e.g. apt-get install build-essential) and rebuild.`,
);
process.exit(1);
