import { describe, expect, it } from 'vitest';
import { ApplyPatchError } from './apply-patch-error.js';
import { formatPatchSummary } from './format-patch-summary.js';
import { planPatch } from './plan-patch.js';
import { summarizePatch } from './summarize-patch.js';
import { touchedPaths } from './touched-paths.js';

const wrap = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');
const CWD = '/work/repo';

/** A reader over an in-memory tree; a directory reads as EISDIR, a missing file as ENOENT. */
function memory(files: Record<string, string>, dirs: string[] = []) {
  const reads: string[] = [];
  const readFile = (path: string) => {
    reads.push(path);
    if (dirs.includes(path)) throw Object.assign(new Error('dir'), { code: 'EISDIR' });
    const text = files[path];
    if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
    return text;
  };
  return { readFile, reads };
}

async function planError(
  patch: string,
  files: Record<string, string>,
  dirs: string[] = [],
): Promise<ApplyPatchError> {
  const error = await planPatch(patch, { cwd: CWD, readFile: memory(files, dirs).readFile }).catch(
    (e: unknown) => e,
  );
  if (!ApplyPatchError.isInstance(error))
    throw new Error(`expected an ApplyPatchError, got ${String(error)}`);
  return error;
}

describe('planPatch', () => {
  it('resolves every operation against cwd without writing', async () => {
    const { readFile, reads } = memory({
      '/work/repo/src/main.ts': 'const a = 1;\nconst b = 2;\n',
      '/work/repo/old.txt': 'bye\nnow\n',
      '/work/repo/src/util.ts': 'export {};\n',
    });
    const plan = await planPatch(
      wrap(
        '*** Add File: docs/new.md',
        '+# New',
        '+text',
        '*** Update File: src/main.ts',
        '@@',
        ' const a = 1;',
        '-const b = 2;',
        '+const b = 3;',
        '+const c = 4;',
        '*** Delete File: old.txt',
        '*** Update File: src/util.ts',
        '*** Move to: lib/util.ts',
        '@@',
        '-export {};',
        '+export const x = 1;',
      ),
      { cwd: CWD, readFile },
    );
    expect(reads).toEqual(['/work/repo/src/main.ts', '/work/repo/old.txt', '/work/repo/src/util.ts']);
    expect(plan.changes).toEqual([
      { kind: 'add', path: '/work/repo/docs/new.md', newContents: '# New\ntext\n', added: 2, removed: 0 },
      {
        kind: 'update',
        path: '/work/repo/src/main.ts',
        oldContents: 'const a = 1;\nconst b = 2;\n',
        newContents: 'const a = 1;\nconst b = 3;\nconst c = 4;\n',
        added: 2,
        removed: 1,
      },
      { kind: 'delete', path: '/work/repo/old.txt', oldContents: 'bye\nnow\n', added: 0, removed: 2 },
      {
        kind: 'update',
        path: '/work/repo/src/util.ts',
        movedTo: '/work/repo/lib/util.ts',
        oldContents: 'export {};\n',
        newContents: 'export const x = 1;\n',
        added: 1,
        removed: 1,
      },
    ]);
    expect(plan.writes).toEqual([
      { path: '/work/repo/docs/new.md', contents: '# New\ntext\n' },
      { path: '/work/repo/src/main.ts', contents: 'const a = 1;\nconst b = 3;\nconst c = 4;\n' },
      {
        path: '/work/repo/lib/util.ts',
        contents: 'export const x = 1;\n',
        modeFrom: '/work/repo/src/util.ts',
      },
    ]);
    expect(plan.removals).toEqual(['/work/repo/old.txt', '/work/repo/src/util.ts']);
    expect(touchedPaths(plan)).toEqual([
      '/work/repo/docs/new.md',
      '/work/repo/src/main.ts',
      '/work/repo/old.txt',
      '/work/repo/src/util.ts',
      '/work/repo/lib/util.ts',
    ]);

    const summary = summarizePatch(plan);
    expect(summary.changes[3]).toEqual({
      path: '/work/repo/src/util.ts',
      kind: 'update',
      movedTo: '/work/repo/lib/util.ts',
      added: 1,
      removed: 1,
    });
    expect(formatPatchSummary(summary)).toBe(
      'Success. Updated the following files:\nA docs/new.md\nM src/main.ts\nM lib/util.ts\nD old.txt\n',
    );
  });

  it('lets later operations see earlier ones (add, then update the same file)', async () => {
    const plan = await planPatch(
      wrap('*** Add File: a.txt', '+one', '*** Update File: a.txt', '@@', '-one', '+two'),
      { cwd: CWD, readFile: memory({}).readFile },
    );
    expect(plan.writes).toEqual([{ path: '/work/repo/a.txt', contents: 'two\n' }]);
    expect(formatPatchSummary(summarizePatch(plan))).toBe(
      'Success. Updated the following files:\nA a.txt\nM a.txt\n',
    );
  });

  it('keeps paths that leave cwd for the caller to judge', async () => {
    const plan = await planPatch(wrap('*** Add File: ../outside.txt', '+x'), {
      cwd: CWD,
      readFile: memory({}).readFile,
    });
    expect(touchedPaths(plan)).toEqual(['/work/outside.txt']);
    expect(formatPatchSummary(summarizePatch(plan))).toBe(
      'Success. Updated the following files:\nA ../outside.txt\n',
    );
  });

  it('treats a move onto the same path as an update', async () => {
    const plan = await planPatch(wrap('*** Update File: a', '*** Move to: ./a', '@@', '-x', '+y'), {
      cwd: CWD,
      readFile: memory({ '/work/repo/a': 'x\n' }).readFile,
    });
    expect(plan.removals).toEqual([]);
    expect(plan.changes[0]?.movedTo).toBeUndefined();
  });

  it('counts no lines for a binary file it deletes', async () => {
    const plan = await planPatch(wrap('*** Delete File: logo.png'), {
      cwd: CWD,
      readFile: () => {
        throw Object.assign(new Error('binary'), { code: 'ENOTUTF8' });
      },
    });
    expect(plan.changes).toEqual([
      { kind: 'delete', path: '/work/repo/logo.png', oldContents: '', added: 0, removed: 0 },
    ]);
  });

  const errors: Array<{
    name: string;
    patch: string;
    files: Record<string, string>;
    dirs?: string[];
    reason: string;
    message: string;
    path?: string;
  }> = [
    {
      name: 'an empty patch',
      patch: wrap(),
      files: {},
      reason: 'empty_patch',
      message: 'No files were modified.',
    },
    {
      name: 'updating a missing file',
      patch: wrap('*** Update File: nope.txt', '@@', '-a', '+b'),
      files: {},
      reason: 'io',
      message: 'Failed to read file to update nope.txt: No such file or directory',
      path: 'nope.txt',
    },
    {
      name: 'deleting a missing file',
      patch: wrap('*** Delete File: nope.txt'),
      files: {},
      reason: 'io',
      message: 'Failed to delete file nope.txt: No such file or directory',
      path: 'nope.txt',
    },
    {
      name: 'deleting a directory',
      patch: wrap('*** Delete File: src'),
      files: {},
      dirs: ['/work/repo/src'],
      reason: 'io',
      message: 'Failed to delete file src: Is a directory',
      path: 'src',
    },
    {
      name: 'updating a file deleted earlier in the patch',
      patch: wrap('*** Delete File: a', '*** Update File: a', '@@', '-x', '+y'),
      files: { '/work/repo/a': 'x\n' },
      reason: 'io',
      message: 'Failed to read file to update a: No such file or directory',
      path: 'a',
    },
    {
      name: 'context that is not there',
      patch: wrap('*** Update File: a.txt', '@@', ' alpha', '-beta', '+gamma'),
      files: { '/work/repo/a.txt': 'alpha\nBETA\n' },
      reason: 'context_not_found',
      message: 'Failed to find expected lines in a.txt:\nalpha\nbeta',
      path: 'a.txt',
    },
  ];

  it.each(errors)('refuses $name', async ({ patch, files, dirs, reason, message, path }) => {
    const error = await planError(patch, files, dirs);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(message);
    expect(error.path).toBe(path);
  });
});
