// Compiles native/ux-path-guard.c and native/ux-sandbox-exec.c into native/build/ with the system C
// compiler ($CC, else cc, gcc or clang). Skips a program whose binary is newer than its source and
// the headers beside it, and skips everything off Linux (bubblewrap is Linux only). Without these
// programs the bwrap backend reports itself unavailable and says how to build them.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.platform !== 'linux') process.exit(0);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const programs = ['ux-path-guard', 'ux-sandbox-exec'];
const candidates = [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean);

// A program's source may include headers beside it (native/*.h): any of them newer rebuilds it.
const headers = readdirSync(join(root, 'native'))
  .filter((file) => file.endsWith('.h'))
  .map((file) => statSync(join(root, 'native', file)).mtimeMs);
let failed = false;
for (const name of programs) {
  const source = join(root, 'native', `${name}.c`);
  const output = join(root, 'native', 'build', name);
  const newest = Math.max(statSync(source).mtimeMs, ...headers);
  if (existsSync(output) && statSync(output).mtimeMs >= newest) continue;
  mkdirSync(dirname(output), { recursive: true });
  const errors = [];
  let built = false;
  for (const compiler of candidates) {
    const temporary = `${output}.${process.pid}`;
    try {
      // -pthread: ux-sandbox-exec's network helper runs a thread per connection and per connect().
      execFileSync(compiler, ['-std=gnu11', '-O2', '-Wall', '-Wextra', '-pthread', '-o', temporary, source], {
        stdio: ['ignore', 'inherit', 'pipe'],
      });
      renameSync(temporary, output);
      built = true;
      break;
    } catch (error) {
      rmSync(temporary, { force: true });
      errors.push(
        `${compiler}: ${error.code === 'ENOENT' ? 'not found' : String(error.stderr ?? error.message).trim()}`,
      );
    }
  }
  if (!built) {
    failed = true;
    console.error(
      `@ux/sandbox-bwrap: cannot compile ${source}:\n  ${errors.join('\n  ')}\nInstall a C compiler (e.g. apt-get install build-essential) and rebuild.`,
    );
  }
}
process.exit(failed ? 1 : 0);
