import { InvalidArgumentsError } from '@ux/protocol/core';

/**
 * Joins argv into the command line `CreateProcessW` takes, quoted so the Microsoft C runtime's parser
 * (`CommandLineToArgvW`) gives back exactly argv: arguments with spaces, tabs or quotes are quoted,
 * quotes escaped, and backslashes doubled only where they precede a quote.
 */
export function windowsCommandLine(argv: readonly string[]): string {
  const program = argv[0] ?? '';
  const issue = (message: string) =>
    new InvalidArgumentsError({ tool: 'sandbox plan', issues: [{ path: 'argv', message }] });
  if (argv.some((arg) => arg.includes('\u0000'))) throw issue('an argument contains a NUL character');
  // The program name is split by other rules (no escapes), so a quote in it cannot be passed through.
  if (program.includes('"')) throw issue(`the program ${JSON.stringify(program)} contains a quote`);
  // CreateProcess runs .bat and .cmd files through cmd.exe, which parses the line by its own rules.
  if (/\.(bat|cmd)$/i.test(program.trim())) {
    throw issue(
      `run batch files through cmd.exe explicitly (cmd.exe /d /s /c "…"), got ${JSON.stringify(program)}`,
    );
  }
  return [
    /[\s]/.test(program) || program === '' ? `"${program}"` : program,
    ...argv.slice(1).map(quoteArgument),
  ].join(' ');
}

function quoteArgument(arg: string): string {
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
