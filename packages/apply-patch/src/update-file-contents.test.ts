import { describe, expect, it } from 'vitest';
import { ApplyPatchError } from './apply-patch-error.js';
import { parsePatch } from './parse-patch.js';
import { normalisePunctuation, seekSequence } from './seek-sequence.js';
import { detectEol, splitLines, updateFileContents } from './update-file-contents.js';

describe('seekSequence', () => {
  const cases: Array<{
    name: string;
    lines: string[];
    pattern: string[];
    start?: number;
    eof?: boolean;
    at: number | undefined;
  }> = [
    { name: 'exact', lines: ['alpha', 'beta', 'gamma'], pattern: ['beta', 'gamma'], at: 1 },
    {
      name: 'trailing whitespace in the file',
      lines: ['alpha  ', 'beta\t'],
      pattern: ['alpha', 'beta'],
      at: 0,
    },
    { name: 'indentation differs', lines: ['    alpha', '\tbeta  '], pattern: ['alpha', 'beta'], at: 0 },
    { name: 'typographic dash in the file', lines: ['range 1\u20132'], pattern: ['range 1-2'], at: 0 },
    {
      name: 'ASCII in the file, typographic in the patch',
      lines: ['say "hi"'],
      pattern: ['say \u201Chi\u201D'],
      at: 0,
    },
    { name: 'non-breaking space', lines: ['a\u00A0b'], pattern: ['a b'], at: 0 },
    { name: 'starts at start', lines: ['x', 'y', 'x', 'y'], pattern: ['x'], start: 1, at: 2 },
    {
      name: 'an exact match later wins over a loose match earlier',
      lines: ['x ', 'x'],
      pattern: ['x'],
      at: 1,
    },
    {
      name: 'end of file prefers the last occurrence',
      lines: ['end', 'mid', 'end'],
      pattern: ['end'],
      eof: true,
      at: 2,
    },
    {
      name: 'end of file falls back to a search',
      lines: ['end', 'more'],
      pattern: ['end'],
      eof: true,
      at: 0,
    },
    { name: 'empty pattern matches at start', lines: ['a'], pattern: [], start: 1, at: 1 },
    { name: 'pattern longer than the file', lines: ['a'], pattern: ['a', 'b'], at: undefined },
    { name: 'not there', lines: ['a', 'b'], pattern: ['c'], at: undefined },
  ];
  it.each(cases)('$name', ({ lines, pattern, start, eof, at }) => {
    expect(seekSequence(lines, pattern, start ?? 0, eof ?? false)).toBe(at);
  });

  it('normalises every dash, quote and space Codex does', () => {
    expect(normalisePunctuation('\u2010\u2011\u2012\u2013\u2014\u2015\u2212')).toBe('-------');
    expect(normalisePunctuation('\u2018\u2019\u201A\u201B\u201C\u201D\u201E\u201F')).toBe(`''''""""`);
    expect(
      normalisePunctuation('\u00A0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000'),
    ).toBe(' '.repeat(13));
    expect(normalisePunctuation('plain — text')).toBe('plain - text');
  });
});

/** Applies the first Update File operation of `body` (hunks only) to `original`. */
function update(original: string, ...body: string[]): string {
  const patch = parsePatch(
    ['*** Begin Patch', '*** Update File: f.txt', ...body, '*** End Patch'].join('\n'),
  );
  const operation = patch.operations[0];
  if (operation?.kind !== 'update') throw new Error('not an update');
  return updateFileContents(original, operation.hunks, 'f.txt');
}

describe('updateFileContents: the hard cases', () => {
  const cases: Array<{ name: string; original: string; body: string[]; expected: string }> = [
    {
      name: 'replaces a line between context lines',
      original: 'one\ntwo\nthree\n',
      body: ['@@', ' one', '-two', '+TWO', ' three'],
      expected: 'one\nTWO\nthree\n',
    },
    {
      name: 'context with trailing whitespace in the file',
      original: 'let a = 1;   \nlet b = 2;\t\n',
      body: ['@@', ' let a = 1;', '-let b = 2;', '+let b = 3;'],
      expected: 'let a = 1;   \nlet b = 3;\n',
    },
    {
      name: 'Unicode dashes and quotes in the file, ASCII in the patch',
      original: '// pages 3\u20134\nconst title = \u201Cdraft\u201D;\nconst n = 1;\n',
      body: ['@@', ' // pages 3-4', ' const title = "draft";', '-const n = 1;', '+const n = 2;'],
      expected: '// pages 3\u20134\nconst title = \u201Cdraft\u201D;\nconst n = 2;\n',
    },
    {
      name: 'several hunks in one file apply in order',
      original: 'a\nb\nc\nd\ne\nf\n',
      body: ['@@', ' a', '-b', '+B', '@@', ' d', '-e', '+E'],
      expected: 'a\nB\nc\nd\nE\nf\n',
    },
    {
      name: 'identical blocks: the second hunk is searched after the first',
      original: 'x = 0\nx = 0\n',
      body: ['@@', '-x = 0', '+x = 1', '@@', '-x = 0', '+x = 2'],
      expected: 'x = 1\nx = 2\n',
    },
    {
      name: 'a repeated @@ anchor finds the next occurrence each time',
      original: 'def a():\n    return 0\ndef b():\n    return 0\ndef c():\n    return 0\n',
      body: [
        '@@ def b():',
        '-    return 0',
        '+    return 2',
        '@@ def c():',
        '-    return 0',
        '+    return 3',
      ],
      expected: 'def a():\n    return 0\ndef b():\n    return 2\ndef c():\n    return 3\n',
    },
    {
      name: 'stacked @@ anchors narrow the search (class, then method)',
      original: [
        'class Cat:',
        '    def speak(self):',
        '        return "..."',
        'class Dog:',
        '    def speak(self):',
        '        return "..."',
        '',
      ].join('\n'),
      body: ['@@ class Dog:', '@@     def speak(self):', '-        return "..."', '+        return "woof"'],
      expected: [
        'class Cat:',
        '    def speak(self):',
        '        return "..."',
        'class Dog:',
        '    def speak(self):',
        '        return "woof"',
        '',
      ].join('\n'),
    },
    {
      name: 'End of File anchors the hunk at the end',
      original: 'end\nmiddle\nend\n',
      body: ['@@', '-end', '+END', '*** End of File'],
      expected: 'end\nmiddle\nEND\n',
    },
    {
      name: 'a pure addition without anchor appends at the end',
      original: 'first\n',
      body: ['@@', '+second', '+third'],
      expected: 'first\nsecond\nthird\n',
    },
    {
      name: 'a pure addition under an anchor goes right after the anchor',
      original: '[deps]\nleft = 1\n[dev]\n',
      body: ['@@ [deps]', '+middle = 2'],
      expected: '[deps]\nmiddle = 2\nleft = 1\n[dev]\n',
    },
    {
      name: 'deleting lines only',
      original: 'keep\ndrop 1\ndrop 2\nkeep too\n',
      body: ['@@', ' keep', '-drop 1', '-drop 2', ' keep too'],
      expected: 'keep\nkeep too\n',
    },
    {
      name: 'a file without a trailing newline stays without one',
      original: 'alpha\nomega',
      body: ['@@', ' alpha', '-omega', '+OMEGA'],
      expected: 'alpha\nOMEGA',
    },
    {
      name: 'appending to a file without a trailing newline',
      original: 'alpha',
      body: ['@@', '+beta'],
      expected: 'alpha\nbeta',
    },
    {
      name: 'CRLF files keep CRLF',
      original: 'one\r\ntwo\r\nthree\r\n',
      body: ['@@', ' one', '-two', '+2', '+2.5', ' three'],
      expected: 'one\r\n2\r\n2.5\r\nthree\r\n',
    },
    {
      name: 'CRLF without a final newline',
      original: 'one\r\ntwo',
      body: ['@@', '-two', '+TWO'],
      expected: 'one\r\nTWO',
    },
    {
      name: 'an empty file gets a final newline',
      original: '',
      body: ['@@', '+hello'],
      expected: 'hello\n',
    },
    {
      name: 'removing every line leaves an empty file',
      original: 'only\n',
      body: ['@@', '-only'],
      expected: '',
    },
    {
      name: 'an empty context line at the end that the file lacks is ignored',
      original: 'a\nb',
      body: ['@@', ' a', '-b', '+c', ' '],
      expected: 'a\nc',
    },
    {
      name: 'an indentation-insensitive match keeps the new lines as written',
      original: '\tif (x) {\n\t\ty();\n\t}\n',
      body: ['@@', ' if (x) {', '-    y();', '+\t\tz();', ' }'],
      expected: '\tif (x) {\n\t\tz();\n\t}\n',
    },
  ];

  it.each(cases)('$name', ({ original, body, expected }) => {
    expect(update(original, ...body)).toBe(expected);
  });

  it('names the file and shows the lines it could not find', () => {
    let caught: unknown;
    try {
      update('one\ntwo\n', '@@', ' one', '-three', '+four');
    } catch (error) {
      caught = error;
    }
    expect(ApplyPatchError.isInstance(caught)).toBe(true);
    expect((caught as ApplyPatchError).reason).toBe('context_not_found');
    expect((caught as ApplyPatchError).message).toBe('Failed to find expected lines in f.txt:\none\nthree');
    expect((caught as ApplyPatchError).line).toBe(3);
    expect((caught as ApplyPatchError).path).toBe('f.txt');
  });

  it('names an @@ anchor it could not find', () => {
    expect(() => update('a\n', '@@ fn missing()', '-a', '+b')).toThrow(
      "Failed to find context 'fn missing()' in f.txt",
    );
  });

  it('does not match a hunk before the previous one', () => {
    expect(() => update('b\na\n', '@@', '-a', '+A', '@@', '-b', '+B')).toThrow(
      'Failed to find expected lines in f.txt:\nb',
    );
  });
});

describe('line ends', () => {
  it('detects the majority line end', () => {
    expect(detectEol('a\r\nb\r\n')).toBe('\r\n');
    expect(detectEol('a\nb\n')).toBe('\n');
    expect(detectEol('a\r\nb\nc\n')).toBe('\n');
    expect(detectEol('no newline')).toBe('\n');
  });
  it('splits without a phantom last line', () => {
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\r\nb')).toEqual(['a', 'b']);
    expect(splitLines('a\n\n')).toEqual(['a', '']);
    expect(splitLines('')).toEqual([]);
  });
});
