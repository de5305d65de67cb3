import { InvalidArgumentsError } from '@ux/protocol/core';

export interface WindowsCommandLineOptions {
  /** Who refuses, named in the error (`invalid <tool> arguments: …`); default `'windows command line'`. */
  tool?: string;
}

/**
 * Joins argv into the command line `CreateProcessW` takes, quoted so the Microsoft C runtime's parser
 * (`CommandLineToArgvW`, every MSVC program) gives back exactly argv: arguments that are empty or hold
 * spaces, tabs or quotes are quoted, quotes escaped, backslashes doubled only where they precede a quote.
 * The program name has no escapes in that parser, so it is quoted when it is empty or holds whitespace.
 *
 * Throws `InvalidArgumentsError` for what no command line carries through: a NUL in any argument, a
 * quote in the program name, and a batch program (`.bat`, `.cmd`), which CreateProcess runs through
 * cmd.exe with cmd's own parsing (run `cmd.exe /d /s /c "…"` explicitly). The one implementation for the
 * Windows spawner of `@ux/spawn` and the launcher of `@ux/sandbox-windows-token`.
 */
export function windowsCommandLine(argv: readonly string[], options: WindowsCommandLineOptions = {}): string {
  const program = argv[0] ?? '';
  const issue = (message: string) =>
    new InvalidArgumentsError({
      tool: options.tool ?? 'windows command line',
      issues: [{ path: 'argv', message }],
    });
  if (argv.some((arg) => arg.includes('\u0000'))) throw issue('an argument contains a NUL character');
  // The program name is split by other rules (no escapes), so a quote in it cannot be passed through.
  if (program.includes('"')) throw issue(`the program ${JSON.stringify(program)} contains a quote`);
  // CreateProcess runs .bat and .cmd files through cmd.exe, which parses the line by its own rules.
  if (/\.(bat|cmd)$/i.test(program.trim())) {
    throw issue(
      `run batch files through cmd.exe explicitly (cmd.exe /d /s /c "…"), got ${JSON.stringify(program)}`,
    );
  }
  const head = /\s/.test(program) || program === '' ? `"${program}"` : program;
  const tail = windowsArgumentsLine(argv.slice(1));
  return tail === '' ? head : `${head} ${tail}`;
}

/**
 * The arguments after the program, quoted as `windowsCommandLine` quotes them, joined by spaces (what
 * node-pty's ConPTY takes beside the program). Quoting only: the caller has refused NUL characters.
 */
export function windowsArgumentsLine(args: readonly string[]): string {
  return args.map(quoteWindowsArgument).join(' ');
}

function quoteWindowsArgument(arg: string): string {
  if (arg !== '' && !/[\s"]/.test(arg)) return arg;
  let quoted = '"';
  let backslashes = 0;
  for (const char of arg) {
    if (char === '\\') {
      backslashes += 1;
    } else if (char === '"') {
      quoted += `${'\\'.repeat(backslashes * 2 + 1)}"`;
      backslashes = 0;
    } else {
      quoted += `${'\\'.repeat(backslashes)}${char}`;
      backslashes = 0;
    }
  }
  return `${quoted}${'\\'.repeat(backslashes * 2)}"`;
}
