import { UxError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { ApplyPatchError } from './apply-patch-error.js';
import { type PatchOperation, parsePatch } from './parse-patch.js';

const wrap = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

function hunk(fields: {
  anchors?: string[];
  oldLines: string[];
  newLines: string[];
  added: number;
  removed: number;
  line: number;
}) {
  return { anchors: [], endOfFile: false, lines: expect.any(Array), ...fields };
}

describe('parsePatch: every production', () => {
  const cases: Array<{ name: string; text: string; operations: PatchOperation[] | unknown[] }> = [
    { name: 'an empty envelope', text: wrap(), operations: [] },
    {
      name: 'Add File with + lines (an empty line is a bare +)',
      text: wrap('*** Add File: notes/todo.md', '+# Todo', '+', '+- water the ferns'),
      operations: [
        { kind: 'add', path: 'notes/todo.md', contents: '# Todo\n\n- water the ferns\n', line: 2 },
      ],
    },
    {
      name: 'Add File with no lines makes an empty file',
      text: wrap('*** Add File: empty.txt'),
      operations: [{ kind: 'add', path: 'empty.txt', contents: '', line: 2 }],
    },
    {
      name: 'Delete File',
      text: wrap('*** Delete File: old/cache.json'),
      operations: [{ kind: 'delete', path: 'old/cache.json', line: 2 }],
    },
    {
      name: 'Update File with a bare @@ hunk',
      text: wrap(
        '*** Update File: src/lamp.ts',
        '@@',
        ' const on = false;',
        '-const watts = 40;',
        '+const watts = 60;',
      ),
      operations: [
        {
          kind: 'update',
          path: 'src/lamp.ts',
          line: 2,
          hunks: [
            {
              anchors: [],
              lines: [
                { sign: ' ', text: 'const on = false;' },
                { sign: '-', text: 'const watts = 40;' },
                { sign: '+', text: 'const watts = 60;' },
              ],
              oldLines: ['const on = false;', 'const watts = 40;'],
              newLines: ['const on = false;', 'const watts = 60;'],
              endOfFile: false,
              added: 1,
              removed: 1,
              line: 3,
            },
          ],
        },
      ],
    },
    {
      name: 'Update File whose first hunk has no @@',
      text: wrap('*** Update File: a.txt', ' keep', '+new'),
      operations: [
        {
          kind: 'update',
          path: 'a.txt',
          line: 2,
          hunks: [
            {
              anchors: [],
              lines: expect.any(Array),
              oldLines: ['keep'],
              newLines: ['keep', 'new'],
              endOfFile: false,
              added: 1,
              removed: 0,
              line: 3,
            },
          ],
        },
      ],
    },
    {
      name: 'Move to, @@ header, End of File',
      text: wrap(
        '*** Update File: src/old_name.py',
        '*** Move to: src/pkg/new_name.py',
        '@@ def tail():',
        '-    return 1',
        '+    return 2',
        '*** End of File',
      ),
      operations: [
        {
          kind: 'update',
          path: 'src/old_name.py',
          moveTo: 'src/pkg/new_name.py',
          line: 2,
          hunks: [
            {
              anchors: ['def tail():'],
              lines: expect.any(Array),
              oldLines: ['    return 1'],
              newLines: ['    return 2'],
              endOfFile: true,
              added: 1,
              removed: 1,
              line: 4,
            },
          ],
        },
      ],
    },
    {
      name: 'several hunks, stacked @@ anchors, blank separators, empty context lines',
      text: wrap(
        '*** Update File: zoo.rb',
        '@@ class Zoo',
        '@@   def feed',
        '-    hay',
        '+    pellets',
        '',
        '@@',
        ' first',
        '',
        '-second',
      ),
      operations: [
        {
          kind: 'update',
          path: 'zoo.rb',
          line: 2,
          hunks: [
            hunk({
              anchors: ['class Zoo', '  def feed'],
              oldLines: ['    hay'],
              newLines: ['    pellets'],
              added: 1,
              removed: 1,
              line: 3,
            }),
            hunk({
              oldLines: ['first', '', 'second'],
              newLines: ['first', ''],
              added: 0,
              removed: 1,
              line: 8,
            }),
          ],
        },
      ],
    },
    {
      name: 'a unified-diff range header keeps only its trailing text as the anchor',
      text: wrap(
        '*** Update File: m.c',
        '@@ -10,4 +10,5 @@ int main(void)',
        '-a',
        '+b',
        '@@ -40,2 +41,2 @@',
        '-c',
        '+d',
      ),
      operations: [
        {
          kind: 'update',
          path: 'm.c',
          line: 2,
          hunks: [
            hunk({
              anchors: ['int main(void)'],
              oldLines: ['a'],
              newLines: ['b'],
              added: 1,
              removed: 1,
              line: 3,
            }),
            hunk({ oldLines: ['c'], newLines: ['d'], added: 1, removed: 1, line: 6 }),
          ],
        },
      ],
    },
    {
      name: 'several operations in one patch',
      text: wrap('*** Add File: x', '+1', '*** Delete File: y', '*** Update File: z', '@@', '-2', '+3'),
      operations: [
        { kind: 'add', path: 'x', contents: '1\n', line: 2 },
        { kind: 'delete', path: 'y', line: 4 },
        {
          kind: 'update',
          path: 'z',
          line: 5,
          hunks: [hunk({ oldLines: ['2'], newLines: ['3'], added: 1, removed: 1, line: 6 })],
        },
      ],
    },
    {
      name: 'whitespace around the envelope and file markers',
      text: '\n  *** Begin Patch  \n  *** Add File: spaced.txt  \n+ok\n *** End Patch \n\n',
      operations: [{ kind: 'add', path: 'spaced.txt', contents: 'ok\n', line: 3 }],
    },
    {
      name: "a heredoc wrapper <<'EOF' … EOF",
      text: `<<'EOF'\n${wrap('*** Delete File: gone.txt')}\nEOF\n`,
      operations: [{ kind: 'delete', path: 'gone.txt', line: 3 }],
    },
    {
      name: 'a heredoc wrapper with another delimiter, unquoted',
      text: `<<PATCH\n${wrap('*** Delete File: gone.txt')}\nPATCH`,
      operations: [{ kind: 'delete', path: 'gone.txt', line: 3 }],
    },
    {
      name: 'CRLF patch text',
      text: wrap('*** Add File: w.txt', '+one', '+two').replaceAll('\n', '\r\n'),
      operations: [{ kind: 'add', path: 'w.txt', contents: 'one\ntwo\n', line: 2 }],
    },
    {
      name: 'relative paths with .. are kept for the policy check',
      text: wrap('*** Add File: ../outside.txt', '+x'),
      operations: [{ kind: 'add', path: '../outside.txt', contents: 'x\n', line: 2 }],
    },
    {
      name: 'a line starting with * in an added file is content when it has the + sign',
      text: wrap('*** Add File: list.md', '+*** not a marker', '+* bullet'),
      operations: [{ kind: 'add', path: 'list.md', contents: '*** not a marker\n* bullet\n', line: 2 }],
    },
  ];

  it.each(cases)('$name', ({ text, operations }) => {
    expect(parsePatch(text).operations).toEqual(operations);
  });

  it('returns the patch text without its heredoc wrapper', () => {
    const inner = wrap('*** Delete File: a');
    expect(parsePatch(`<<'EOF'\n${inner}\nEOF`).text).toBe(inner);
  });
});

describe('parsePatch: every error', () => {
  const cases: Array<{ name: string; text: string; reason: string; message: string; line?: number }> = [
    {
      name: 'empty text',
      text: '',
      reason: 'invalid_patch',
      message: "The first line of the patch must be '*** Begin Patch'",
      line: 1,
    },
    {
      name: 'no Begin Patch',
      text: '*** Add File: a\n+x\n*** End Patch',
      reason: 'invalid_patch',
      message: "The first line of the patch must be '*** Begin Patch'",
      line: 1,
    },
    {
      name: 'no End Patch',
      text: '*** Begin Patch\n*** Add File: a\n+x',
      reason: 'invalid_patch',
      message: "The last line of the patch must be '*** End Patch'",
      line: 3,
    },
    {
      name: 'only Begin Patch',
      text: '*** Begin Patch',
      reason: 'invalid_patch',
      message: "The last line of the patch must be '*** End Patch'",
      line: 1,
    },
    {
      name: 'a heredoc wrapper around a patch without End Patch',
      text: "<<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\nEOF",
      reason: 'invalid_patch',
      message: "The last line of the patch must be '*** End Patch'",
      line: 4,
    },
    {
      name: 'an unknown file header',
      text: wrap('*** Create File: a.txt', '+x'),
      reason: 'invalid_hunk',
      message:
        "Invalid hunk at line 2: '*** Create File: a.txt' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
      line: 2,
    },
    {
      name: 'an added-file line without +',
      text: wrap('*** Add File: a.txt', '+one', 'two'),
      reason: 'invalid_hunk',
      message:
        "Invalid hunk at line 4: 'two' is not a valid hunk header (every line of an added file starts with '+'). Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
      line: 4,
    },
    {
      name: 'a blank line inside an added file',
      text: wrap('*** Add File: poem.txt', '+roses', '', '+violets'),
      reason: 'invalid_hunk',
      message:
        "Invalid hunk at line 4: a blank line interrupts the added file 'poem.txt'; write an empty line of the file as '+'",
      line: 4,
    },
    {
      name: 'an empty Update File',
      text: wrap('*** Update File: x', '*** Delete File: y'),
      reason: 'invalid_hunk',
      message: "Invalid hunk at line 2: Update file hunk for path 'x' is empty",
      line: 2,
    },
    {
      name: 'an Update File followed directly by End Patch',
      text: wrap('*** Update File: test.py'),
      reason: 'invalid_hunk',
      message: "Invalid hunk at line 2: Update file hunk for path 'test.py' is empty",
      line: 2,
    },
    {
      name: 'a hunk line without a sign',
      text: wrap('*** Update File: a', '@@', 'no sign here'),
      reason: 'invalid_hunk',
      message: "Invalid hunk at line 4: expected a line starting with ' ', '+' or '-', got 'no sign here'",
      line: 4,
    },
    {
      name: 'a line without a sign after hunk lines',
      text: wrap('*** Update File: a', '@@', '-x', '+y', 'stray'),
      reason: 'invalid_hunk',
      message:
        "Invalid hunk at line 6: expected a line starting with ' ', '+' or '-' (or '@@' to start another hunk), got 'stray'",
      line: 6,
    },
    {
      name: '@@ with no lines after it',
      text: wrap('*** Update File: a', '@@ fn main'),
      reason: 'invalid_hunk',
      message:
        "Invalid hunk at line 3: the hunk has no lines: add ' ' (context), '-' (removed) or '+' (added) lines after '@@'",
      line: 3,
    },
    {
      name: '@@ followed by End of File',
      text: wrap('*** Update File: a', '@@', '*** End of File'),
      reason: 'invalid_hunk',
      message:
        "Invalid hunk at line 3: the hunk has no lines: add ' ' (context), '-' (removed) or '+' (added) lines after '@@'",
      line: 3,
    },
    {
      name: 'an absolute path',
      text: wrap('*** Add File: /etc/motd', '+hi'),
      reason: 'invalid_path',
      message:
        "Invalid path at line 2: '/etc/motd' is absolute; file references must be relative to the working directory",
      line: 2,
    },
    {
      name: 'an absolute Move to',
      text: wrap('*** Update File: a', '*** Move to: /tmp/b', '@@', '-x', '+y'),
      reason: 'invalid_path',
      message:
        "Invalid path at line 3: '/tmp/b' is absolute; file references must be relative to the working directory",
      line: 3,
    },
    {
      name: 'a Windows absolute path',
      text: wrap('*** Delete File: C:\\Users\\me\\x.txt'),
      reason: 'invalid_path',
      message:
        "Invalid path at line 2: 'C:\\Users\\me\\x.txt' is absolute; file references must be relative to the working directory",
      line: 2,
    },
    {
      name: 'a home-relative path',
      text: wrap('*** Delete File: ~/notes.txt'),
      reason: 'invalid_path',
      message:
        "Invalid path at line 2: '~/notes.txt' starts with '~', which is not expanded; use a path relative to the working directory",
      line: 2,
    },
    {
      name: 'a missing path',
      text: wrap('*** Delete File:   '),
      reason: 'invalid_path',
      message: "Invalid path at line 2: missing path after '*** Delete File:'",
      line: 2,
    },
    {
      name: 'a NUL byte in a path',
      text: wrap('*** Add File: a\0b', '+x'),
      reason: 'invalid_path',
      message: 'Invalid path at line 2: the path contains a NUL byte',
      line: 2,
    },
    {
      name: 'line numbers count blank lines before the patch',
      text: `\n\n${wrap('*** Frobnicate: x')}`,
      reason: 'invalid_hunk',
      message: expect.stringMatching(
        /^Invalid hunk at line 4: '\*\*\* Frobnicate: x' is not a valid hunk header/,
      ),
      line: 4,
    },
  ];

  it.each(cases)('$name', ({ text, reason, message, line }) => {
    let caught: unknown;
    try {
      parsePatch(text);
    } catch (error) {
      caught = error;
    }
    expect(ApplyPatchError.isInstance(caught)).toBe(true);
    const error = caught as ApplyPatchError;
    expect(error.reason).toBe(reason);
    expect(error.message).toEqual(message);
    expect(error.line).toBe(line);
  });

  it('marks its errors so another copy of the package recognises them', () => {
    const foreign = Object.assign(new Error('x'), { [Symbol.for('ux.apply-patch.error')]: true });
    expect(ApplyPatchError.isInstance(foreign)).toBe(true);
    expect(ApplyPatchError.isInstance(new Error('x'))).toBe(false);
    expect(ApplyPatchError.isInstance(undefined)).toBe(false);
    const error = new ApplyPatchError({ reason: 'invalid_hunk', detail: 'bad', line: 3, path: 'a' });
    // A UxError like every public ux error, with the code that says what happened.
    expect(UxError.isInstance(error)).toBe(true);
    expect(error.code).toBe('apply_patch_failed');
    expect(error.toJSON()).toEqual({
      name: 'ApplyPatchError',
      code: 'apply_patch_failed',
      reason: 'invalid_hunk',
      message: 'Invalid hunk at line 3: bad',
      line: 3,
      path: 'a',
    });
  });
});
