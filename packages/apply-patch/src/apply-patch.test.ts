import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { type ApplyPatchFileSystem, applyPatch, applyPlan } from './apply-patch.js';
import { ApplyPatchError } from './apply-patch-error.js';
import { formatPatchSummary } from './format-patch-summary.js';
import { planPatch } from './plan-patch.js';
import { touchedPaths } from './touched-paths.js';

const wrap = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

/** Writes `files` (relative path → contents) under a fresh temp dir. */
function tree(files: Record<string, string | Buffer>): string {
  const root = tempDir('ux-apply-patch-');
  for (const [path, contents] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), contents);
  }
  return root;
}

/** Every file under `root` with its contents, to compare before and after. */
function snapshot(root: string): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        result[`${path.slice(root.length + 1)}/`] = '';
        walk(path);
      } else result[path.slice(root.length + 1)] = readFileSync(path, 'latin1');
    }
  };
  walk(root);
  return result;
}

async function applyError(patch: string, cwd: string, fs?: ApplyPatchFileSystem): Promise<ApplyPatchError> {
  const error = await applyPatch(patch, { cwd, ...(fs ? { fs } : {}) }).catch((e: unknown) => e);
  if (!ApplyPatchError.isInstance(error))
    throw new Error(`expected an ApplyPatchError, got ${String(error)}`);
  return error;
}

describe('applyPatch on a real directory', () => {
  it('adds, updates, deletes and moves, and returns the summary', async () => {
    const root = tree({
      'src/app.py': 'def greet():\n    print("Hi")\n',
      'obsolete.txt': 'remove me\n',
      'old/name.txt': 'from\n',
      'old/other.txt': 'stays\n',
    });
    const summary = await applyPatch(
      wrap(
        '*** Add File: hello.txt',
        '+Hello world',
        '*** Update File: src/app.py',
        '@@ def greet():',
        '-    print("Hi")',
        '+    print("Hello, world!")',
        '*** Delete File: obsolete.txt',
        '*** Update File: old/name.txt',
        '*** Move to: renamed/deep/dir/name.txt',
        '@@',
        '-from',
        '+to',
      ),
      { cwd: root },
    );
    expect(snapshot(root)).toEqual({
      'hello.txt': 'Hello world\n',
      'src/': '',
      'src/app.py': 'def greet():\n    print("Hello, world!")\n',
      'old/': '',
      'old/other.txt': 'stays\n',
      'renamed/': '',
      'renamed/deep/': '',
      'renamed/deep/dir/': '',
      'renamed/deep/dir/name.txt': 'to\n',
    });
    expect(summary.changes.map((change) => [change.kind, change.path, change.movedTo])).toEqual([
      ['add', join(root, 'hello.txt'), undefined],
      ['update', join(root, 'src/app.py'), undefined],
      ['delete', join(root, 'obsolete.txt'), undefined],
      ['update', join(root, 'old/name.txt'), join(root, 'renamed/deep/dir/name.txt')],
    ]);
    expect(formatPatchSummary(summary)).toBe(
      'Success. Updated the following files:\nA hello.txt\nM src/app.py\nM renamed/deep/dir/name.txt\nD obsolete.txt\n',
    );
  });

  it('keeps CRLF, a missing final newline and the file mode', async () => {
    const root = tree({ 'win.txt': 'a\r\nb\r\n', 'tail.txt': 'x\ny', 'run.sh': '#!/bin/sh\necho 1\n' });
    chmodSync(join(root, 'run.sh'), 0o755);
    await applyPatch(
      wrap(
        '*** Update File: win.txt',
        '@@',
        '-b',
        '+B',
        '*** Update File: tail.txt',
        '@@',
        '-y',
        '+Y',
        '*** End of File',
        '*** Update File: run.sh',
        '*** Move to: bin/run.sh',
        '@@',
        '-echo 1',
        '+echo 2',
      ),
      { cwd: root },
    );
    expect(readFileSync(join(root, 'win.txt'), 'utf8')).toBe('a\r\nB\r\n');
    expect(readFileSync(join(root, 'tail.txt'), 'utf8')).toBe('x\nY');
    expect(statSync(join(root, 'bin/run.sh')).mode & 0o777).toBe(0o755);
    expect(existsSync(join(root, 'run.sh'))).toBe(false);
  });

  it('overwrites an existing file on Add and an existing destination on Move, like Codex', async () => {
    const root = tree({ 'dup.txt': 'old\n', 'src.txt': 'a\n', 'dest.txt': 'taken\n' });
    await applyPatch(
      wrap(
        '*** Add File: dup.txt',
        '+new',
        '*** Update File: src.txt',
        '*** Move to: dest.txt',
        '@@',
        '-a',
        '+b',
      ),
      { cwd: root },
    );
    expect(snapshot(root)).toEqual({ 'dup.txt': 'new\n', 'dest.txt': 'b\n' });
  });

  it('writes through a symlink and keeps the link', async () => {
    const root = tree({ 'real.md': 'one\n' });
    symlinkSync('real.md', join(root, 'link.md'));
    await applyPatch(wrap('*** Update File: link.md', '@@', '-one', '+two'), { cwd: root });
    expect(lstatSync(join(root, 'link.md')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, 'link.md'))).toBe('real.md');
    expect(readFileSync(join(root, 'real.md'), 'utf8')).toBe('two\n');
  });

  it('refuses to update a file that is not UTF-8 and leaves it alone', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x0a]);
    const root = tree({ 'logo.png': bytes });
    const error = await applyError(wrap('*** Update File: logo.png', '@@', '-x', '+y'), root);
    expect(error.message).toBe('Failed to read file to update logo.png: the file is not valid UTF-8 text');
    expect(readFileSync(join(root, 'logo.png'))).toEqual(bytes);
    // Deleting it is fine.
    await applyPatch(wrap('*** Delete File: logo.png'), { cwd: root });
    expect(existsSync(join(root, 'logo.png'))).toBe(false);
  });

  it('plans, lets the caller check touched paths, then applies the same plan', async () => {
    const root = tree({ 'a.txt': '1\n' });
    const plan = await planPatch(
      wrap('*** Update File: a.txt', '@@', '-1', '+2', '*** Add File: b/c.txt', '+3'),
      {
        cwd: root,
      },
    );
    expect(touchedPaths(plan)).toEqual([join(root, 'a.txt'), join(root, 'b/c.txt')]);
    expect(snapshot(root)).toEqual({ 'a.txt': '1\n' });
    const summary = await applyPlan(plan);
    expect(summary.changes.map((change) => change.added)).toEqual([1, 1]);
    expect(snapshot(root)).toEqual({ 'a.txt': '2\n', 'b/': '', 'b/c.txt': '3\n' });
  });
});

describe('applyPatch is all or nothing', () => {
  const files = {
    'keep/a.txt': 'alpha\nbeta\n',
    'keep/b.txt': 'gamma\n',
    'gone.txt': 'delete me\n',
    'mv/src.txt': 'move me\n',
  };
  const goodOperations = [
    '*** Add File: fresh/dir/new.txt',
    '+brand new',
    '*** Update File: keep/a.txt',
    '@@',
    '-alpha',
    '+ALPHA',
    '*** Delete File: gone.txt',
    '*** Update File: mv/src.txt',
    '*** Move to: moved/here/dst.txt',
    '@@',
    '-move me',
    '+moved',
  ];

  it('a patch with one bad hunk changes no file at all', async () => {
    const root = tree(files);
    const before = snapshot(root);
    const error = await applyError(
      wrap(...goodOperations, '*** Update File: keep/b.txt', '@@', '-not in the file', '+x'),
      root,
    );
    expect(error.reason).toBe('context_not_found');
    expect(error.message).toBe('Failed to find expected lines in keep/b.txt:\nnot in the file');
    expect(snapshot(root)).toEqual(before);
  });

  const failures: Array<{
    name: string;
    fail: (fs: ApplyPatchFileSystem) => Partial<ApplyPatchFileSystem>;
    action: string;
  }> = [
    {
      name: 'writing the second temporary file',
      fail: (fs) => {
        let writes = 0;
        return {
          writeFile: (async (...args: Parameters<typeof fs.writeFile>) => {
            if (++writes === 2) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
            return fs.writeFile(...args);
          }) as typeof fs.writeFile,
        };
      },
      action: 'No space left on device',
    },
    {
      name: 'renaming the third file into place',
      fail: (fs) => {
        let renames = 0;
        return {
          rename: (async (from: string, to: string) => {
            if (String(from).includes('.ux-patch-tmp') && ++renames === 3) {
              throw Object.assign(new Error('nope'), { code: 'EACCES' });
            }
            return fs.rename(from, to);
          }) as typeof fs.rename,
        };
      },
      action: 'Permission denied',
    },
    {
      name: 'removing the move source after every write',
      fail: (fs) => ({
        rename: (async (from: string, to: string) => {
          if (String(from).endsWith('mv/src.txt')) throw Object.assign(new Error('busy'), { code: 'EPERM' });
          return fs.rename(from, to);
        }) as typeof fs.rename,
      }),
      action: 'Operation not permitted',
    },
    {
      name: 'hard links being unsupported (falls back to copies) and then a rename failing',
      fail: (fs) => ({
        link: (async () => {
          throw Object.assign(new Error('no links'), { code: 'EPERM' });
        }) as typeof fs.link,
        rename: (async (from: string, to: string) => {
          if (String(from).endsWith('gone.txt')) throw Object.assign(new Error('ro'), { code: 'EROFS' });
          return fs.rename(from, to);
        }) as typeof fs.rename,
      }),
      action: 'Read-only file system',
    },
  ];

  it.each(failures)('a failure while $name restores every file', async ({ fail, action }) => {
    const root = tree(files);
    const before = snapshot(root);
    const fs: ApplyPatchFileSystem = { ...nodeFs, ...fail(nodeFs) };
    const error = await applyError(wrap(...goodOperations), root, fs);
    expect(error.reason).toBe('io');
    expect(error.message).toContain(action);
    expect(error.message).toMatch(/; no file was changed$/);
    // Same files, same contents, no temporary or backup files, no new directories.
    expect(snapshot(root)).toEqual(before);
  });

  it('the same patch applies when nothing fails', async () => {
    const root = tree(files);
    await applyPatch(wrap(...goodOperations), { cwd: root });
    expect(snapshot(root)).toEqual({
      'fresh/': '',
      'fresh/dir/': '',
      'fresh/dir/new.txt': 'brand new\n',
      'keep/': '',
      'keep/a.txt': 'ALPHA\nbeta\n',
      'keep/b.txt': 'gamma\n',
      'mv/': '',
      'moved/': '',
      'moved/here/': '',
      'moved/here/dst.txt': 'moved\n',
    });
  });

  it('refuses to write below a path that is a file and creates nothing', async () => {
    const root = tree({ 'plain.txt': 'x\n' });
    const before = snapshot(root);
    const error = await applyError(
      wrap('*** Add File: ok/new.txt', '+1', '*** Add File: plain.txt/child.txt', '+2'),
      root,
    );
    expect(error.reason).toBe('io');
    expect(error.path).toBe('plain.txt/child.txt');
    expect(snapshot(root)).toEqual(before);
  });
});
