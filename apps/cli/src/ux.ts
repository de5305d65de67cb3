import { setFlagsFromString } from 'node:v8';
import { main } from './main.js';
import { Terminal } from './terminal.js';

// The bash grammar is WebAssembly. Optimising it in the background (TurboFan) costs about a second of
// CPU, and Node waits for that work whenever its event loop is briefly idle, which stalls a short
// command by the same second. The baseline compiler parses a command line in microseconds.
setFlagsFromString('--liftoff-only');

let terminal: Terminal | undefined;
process.exitCode = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  platform: process.platform,
  terminal: () => {
    if (!process.stdin.isTTY || !process.stdout.isTTY) return undefined;
    terminal ??= new Terminal(process.stdin, process.stdout);
    return terminal;
  },
});
