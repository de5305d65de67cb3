// Compiles native/ux-spawn-helper.c into native/build/ux-spawn-helper with the system C compiler
// ($CC, else cc, gcc or clang). Skips the work when the binary is newer than the source. The same
// toolchain that builds node-pty builds this; without one, @ux/spawn cannot start PTYs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.platform === 'win32') process.exit(0);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'native', 'ux-spawn-helper.c');
const output = join(root, 'native', 'build', 'ux-spawn-helper');
if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) process.exit(0);

mkdirSync(dirname(output), { recursive: true });
const candidates = [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean);
const errors = [];
for (const compiler of candidates) {
  try {
    const temporary = `${output}.${process.pid}`;
    execFileSync(compiler, ['-O2', '-Wall', '-Wextra', '-o', temporary, source], {
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    renameSync(temporary, output);
    process.exit(0);
  } catch (error) {
    errors.push(
      `${compiler}: ${error.code === 'ENOENT' ? 'not found' : String(error.stderr ?? error.message).trim()}`,
    );
  }
}
console.error(
  `@ux/spawn: cannot compile ${source}:\n  ${errors.join('\n  ')}\nInstall a C compiler (e.g. apt-get install build-essential) and rebuild.`,
);
process.exit(1);
