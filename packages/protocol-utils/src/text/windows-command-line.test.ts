import { InvalidArgumentsError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { windowsArgumentsLine, windowsCommandLine } from './windows-command-line.js';

/**
 * The Microsoft C runtime's argument parser (the rules `CommandLineToArgvW` and every MSVC program use):
 * the program name ends at the closing quote or at whitespace, without escapes; after it, 2n backslashes
 * before a quote give n backslashes and toggle quoting, 2n+1 give n and a literal quote, others are literal.
 */
function parseCommandLine(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  let program = '';
  if (line[0] === '"') {
    i = 1;
    while (i < line.length && line[i] !== '"') program += line[i++];
    i += 1;
  } else {
    while (i < line.length && !/\s/.test(line[i]!)) program += line[i++];
  }
  args.push(program);
  for (;;) {
    while (i < line.length && /[ \t]/.test(line[i]!)) i += 1;
    if (i >= line.length) return args;
    let arg = '';
    let quoted = false;
    while (i < line.length && (quoted || !/[ \t]/.test(line[i]!))) {
      let backslashes = 0;
      while (line[i] === '\\') {
        backslashes += 1;
        i += 1;
      }
      if (line[i] === '"') {
        arg += '\\'.repeat(Math.floor(backslashes / 2));
        if (backslashes % 2 === 1) arg += '"';
        else quoted = !quoted;
        i += 1;
      } else {
        arg += '\\'.repeat(backslashes);
        if (i < line.length && (quoted || !/[ \t]/.test(line[i]!))) arg += line[i++];
      }
    }
    args.push(arg);
  }
}

describe('windowsCommandLine', () => {
  it('quotes only what needs it', () => {
    expect(windowsCommandLine(['cmd.exe', '/d', '/c', 'echo hi'])).toBe('cmd.exe /d /c "echo hi"');
    expect(windowsCommandLine(['C:\\Program Files\\node.exe', '-e', ''])).toBe(
      '"C:\\Program Files\\node.exe" -e ""',
    );
    expect(windowsCommandLine(['a.exe', 'say "hi"'])).toBe('a.exe "say \\"hi\\""');
    expect(windowsCommandLine(['a.exe', 'C:\\dir with space\\'])).toBe('a.exe "C:\\dir with space\\\\"');
    expect(windowsCommandLine(['a.exe', 'C:\\no\\space\\'])).toBe('a.exe C:\\no\\space\\');
    expect(windowsCommandLine(['a.exe'])).toBe('a.exe');
    expect(windowsCommandLine([])).toBe('""');
    expect(windowsArgumentsLine([])).toBe('');
    expect(windowsArgumentsLine(['/c', 'dir "C:\\x y"'])).toBe('/c "dir \\"C:\\x y\\""');
  });

  it('round-trips through the C runtime parser, for awkward arguments', () => {
    const awkward = [
      '',
      ' ',
      '"',
      '\\',
      '\\\\"',
      'a\\"b',
      'tab\there',
      'trail\\\\',
      'ü 日本',
      '\\"\\',
      'x"y z\\',
    ];
    for (const arg of awkward) {
      const argv = ['C:\\Tools\\run me.exe', arg, 'end'];
      expect(parseCommandLine(windowsCommandLine(argv)), JSON.stringify(arg)).toEqual(argv);
    }
    for (let seed = 1; seed <= 300; seed++) {
      let state = seed;
      const next = () => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state;
      };
      const argv = [
        'prog.exe',
        ...Array.from({ length: 1 + (next() % 4) }, () =>
          Array.from({ length: next() % 8 }, () => ' \\"ab\t'[next() % 6]).join(''),
        ),
      ];
      expect(parseCommandLine(windowsCommandLine(argv))).toEqual(argv);
    }
  });

  it('refuses what cannot be passed safely', () => {
    expect(() => windowsCommandLine(['a.exe', 'x\u0000y'])).toThrow(/NUL/);
    expect(() => windowsCommandLine(['C:\\a"b.exe'])).toThrow(/contains a quote/);
    expect(() => windowsCommandLine(['build.BAT', 'x'])).toThrow(/cmd.exe explicitly/);
    expect(() => windowsCommandLine(['C:\\x\\setup.cmd'])).toThrow(/cmd.exe explicitly/);
  });

  it('names the caller in its error, as an InvalidArgumentsError on argv', () => {
    const refusal = (options?: { tool: string }) => {
      try {
        windowsCommandLine(['run.cmd'], options);
      } catch (error) {
        return error;
      }
      throw new Error('not refused');
    };
    const named = refusal({ tool: 'sandbox plan' });
    expect(InvalidArgumentsError.isInstance(named)).toBe(true);
    expect(named).toMatchObject({ tool: 'sandbox plan', issues: [{ path: 'argv' }] });
    expect((named as Error).message).toMatch(/^invalid sandbox plan arguments: argv: run batch files/);
    expect(refusal()).toMatchObject({ tool: 'windows command line' });
  });
});
