import { isatty } from 'node:tty';
import { main } from './main.js';
import { Terminal } from './terminal.js';

let terminal: Terminal | undefined;
// CommonJS, so no top-level await: Node starts a CommonJS entry without its ES module loader,
// about 8 ms sooner (tsup.config.ts).
void main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  platform: process.platform,
  terminal: () => {
    // isatty first: touching process.stdin builds its stream (about a millisecond) even when unused.
    if (!isatty(0) || !isatty(1) || !process.stdin.isTTY || !process.stdout.isTTY) return undefined;
    terminal ??= new Terminal(process.stdin, process.stdout);
    return terminal;
  },
}).then((code) => {
  process.exitCode = code;
});
