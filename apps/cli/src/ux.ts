import { main } from './main.js';
import { Terminal } from './terminal.js';

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
