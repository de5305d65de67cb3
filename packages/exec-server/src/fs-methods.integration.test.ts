import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { fsMethods, readDirectoryEntries } from './fs-methods.js';
import { RpcError } from './rpc-error.js';

const uri = (path: string) => `file://${path}`;
const call = (method: string, params: object) => fsMethods[method]!(params);

async function rpcError(run: Promise<unknown>): Promise<RpcError> {
  const error = await run.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RpcError);
  return error as RpcError;
}

describe('fs methods on what a sandboxed command planted', () => {
  it('fs/readFile: a FIFO is refused at once; followSymlinks false refuses a link', async () => {
    const dir = tempDir('ux-fsm-');
    execFileSync('mkfifo', [join(dir, 'AGENTS.md')]);
    writeFileSync(join(dir, 'real.md'), 'real');
    symlinkSync(join(dir, 'real.md'), join(dir, 'link.md'));
    const fifo = await rpcError(call('fs/readFile', { path: uri(join(dir, 'AGENTS.md')) }));
    expect(fifo.wireCode).toBe(-32603);
    expect(fifo.message).toBe(
      `fs/readFile: ${join(dir, 'AGENTS.md')} is a FIFO (named pipe), not a regular file; fs/readFile reads regular files only`,
    );
    expect(await call('fs/readFile', { path: uri(join(dir, 'link.md')) })).toEqual({
      dataBase64: Buffer.from('real').toString('base64'),
    });
    const noFollow = await rpcError(
      call('fs/readFile', { path: uri(join(dir, 'link.md')), followSymlinks: false }),
    );
    expect(noFollow.message).toBe(
      `fs/readFile: ${join(dir, 'link.md')} is a symbolic link, and followSymlinks is false`,
    );
    expect((await rpcError(call('fs/readFile', { path: uri(join(dir, 'missing')) }))).wireCode).toBe(-32004);
  });

  it('fs/writeFile: a link is refused and its target untouched; a plain file is written', async () => {
    const dir = tempDir('ux-fsm-');
    const outside = tempDir('ux-fsm-outside-');
    writeFileSync(join(outside, '.bashrc'), 'original\n');
    symlinkSync(join(outside, '.bashrc'), join(dir, 'notes.md'));
    const refused = await rpcError(
      call('fs/writeFile', {
        path: uri(join(dir, 'notes.md')),
        dataBase64: Buffer.from('evil').toString('base64'),
      }),
    );
    expect(refused.message).toContain(
      `fs/writeFile: ${join(dir, 'notes.md')} is a symbolic link; fs/writeFile does not write through a link`,
    );
    expect(readFileSync(join(outside, '.bashrc'), 'utf8')).toBe('original\n');
    await call('fs/writeFile', {
      path: uri(join(dir, 'new.md')),
      dataBase64: Buffer.from('ok').toString('base64'),
    });
    expect(readFileSync(join(dir, 'new.md'), 'utf8')).toBe('ok');
  });

  it('fs/remove: a link to a directory goes, the directory stays', async () => {
    const dir = tempDir('ux-fsm-');
    const outside = tempDir('ux-fsm-outside-');
    writeFileSync(join(outside, 'keep'), 'keep');
    mkdirSync(join(dir, 'tree'));
    symlinkSync(outside, join(dir, 'tree/link'));
    await call('fs/remove', { path: uri(join(dir, 'tree')), recursive: true });
    expect(existsSync(join(dir, 'tree'))).toBe(false);
    expect(readdirSync(outside)).toEqual(['keep']);
  });

  it('fs/readDirectory: a FIFO fails at once; a directory over the limit is an error, not a short list', async () => {
    const dir = tempDir('ux-fsm-');
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect((await rpcError(call('fs/readDirectory', { path: uri(join(dir, 'fifo')) }))).message).toContain(
      'ENOTDIR',
    );
    for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, name), '');
    expect(await readDirectoryEntries(dir, 4)).toHaveLength(4);
    await expect(readDirectoryEntries(dir, 3)).rejects.toThrow(
      `fs/readDirectory: ${dir} holds more than 3 entries; fs/readDirectory returns at most 3`,
    );
  });
});
