import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  canAnchorOnDescriptors,
  NotRegularFileError,
  type OpenRegularFileOptions,
  openRegularFile,
  readAtMost,
} from './open-regular-file.js';

/** Both ways: through `/proc/self/fd` (Linux) and the portable one. */
const ways = [
  { name: 'anchored on descriptors', anchorOnDescriptors: true },
  { name: 'path-checked', anchorOnDescriptors: false },
];

async function read(path: string, options: Partial<OpenRegularFileOptions> = {}): Promise<string> {
  const { handle, stats } = await openRegularFile(path, { access: 'read', followLink: true, ...options });
  try {
    return (await readAtMost(handle, 1 << 20, stats.size))!.toString('utf8');
  } finally {
    await handle.close();
  }
}

async function write(
  path: string,
  text: string,
  options: Partial<OpenRegularFileOptions> = {},
): Promise<void> {
  const { handle } = await openRegularFile(path, { access: 'write', followLink: false, ...options });
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

async function refusal(run: Promise<unknown>): Promise<NotRegularFileError> {
  const error = await run.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(NotRegularFileError);
  return error as NotRegularFileError;
}

describe('openRegularFile', () => {
  it('anchors on descriptors on Linux', () => {
    expect(canAnchorOnDescriptors()).toBe(process.platform === 'linux');
  });

  describe.each(ways)('$name', ({ anchorOnDescriptors }) => {
    const options = { anchorOnDescriptors };

    it('reads a regular file and one a link leads to; a link with followLink false is refused', async () => {
      const dir = tempDir('ux-orf-');
      writeFileSync(join(dir, 'a.txt'), 'hello\n');
      symlinkSync(join(dir, 'a.txt'), join(dir, 'link.md'));
      expect(await read(join(dir, 'a.txt'), options)).toBe('hello\n');
      expect(await read(join(dir, 'link.md'), options)).toBe('hello\n');
      const refused = await refusal(read(join(dir, 'link.md'), { ...options, followLink: false }));
      expect(refused.kind).toBe('a symbolic link');
    });

    it('refuses a FIFO at once, without waiting for a writer, and a link to one', async () => {
      const dir = tempDir('ux-orf-');
      execFileSync('mkfifo', [join(dir, 'AGENTS.md')]);
      symlinkSync(join(dir, 'AGENTS.md'), join(dir, 'via-link.md'));
      const refused = await refusal(read(join(dir, 'AGENTS.md'), options));
      expect(refused.kind).toBe('a FIFO (named pipe)');
      expect(refused.message).toBe(`${join(dir, 'AGENTS.md')} is a FIFO (named pipe)`);
      expect((await refusal(read(join(dir, 'via-link.md'), options))).kind).toBe('a FIFO (named pipe)');
    });

    it('refuses a link to /dev/zero as a character device, naming where it leads', async () => {
      const dir = tempDir('ux-orf-');
      symlinkSync('/dev/zero', join(dir, 'AGENTS.md'));
      const refused = await refusal(read(join(dir, 'AGENTS.md'), options));
      expect(refused.kind).toBe('a character device');
      if (anchorOnDescriptors)
        expect(refused.message).toBe(`${join(dir, 'AGENTS.md')} (a link to /dev/zero) is a character device`);
    });

    it('refuses a directory and a socket', async () => {
      const dir = tempDir('ux-orf-');
      mkdirSync(join(dir, 'sub'));
      expect((await refusal(read(join(dir, 'sub'), options))).kind).toBe('a directory');
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(join(dir, 'sock'), resolve));
      onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
      expect((await refusal(read(join(dir, 'sock'), options))).kind).toBe('a socket');
    });

    it('writes: creates a missing file, truncates an existing one', async () => {
      const dir = tempDir('ux-orf-');
      await write(join(dir, 'new.txt'), 'created', options);
      expect(readFileSync(join(dir, 'new.txt'), 'utf8')).toBe('created');
      await write(join(dir, 'new.txt'), 'x', options);
      expect(readFileSync(join(dir, 'new.txt'), 'utf8')).toBe('x');
    });

    it('never writes through a link (to a file or nowhere), nor into a FIFO or a device', async () => {
      const dir = tempDir('ux-orf-');
      const outside = tempDir('ux-orf-outside-');
      writeFileSync(join(outside, 'bashrc'), 'original\n');
      symlinkSync(join(outside, 'bashrc'), join(dir, 'AGENTS.md'));
      symlinkSync(join(outside, 'created-by-write'), join(dir, 'dangling.md'));
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      symlinkSync('/dev/null', join(dir, 'null'));
      expect((await refusal(write(join(dir, 'AGENTS.md'), 'evil', options))).kind).toBe('a symbolic link');
      expect((await refusal(write(join(dir, 'dangling.md'), 'evil', options))).kind).toBe('a symbolic link');
      expect((await refusal(write(join(dir, 'fifo'), 'evil', options))).kind).toBe('a FIFO (named pipe)');
      expect((await refusal(write(join(dir, 'null'), 'evil', options))).kind).toBe('a symbolic link');
      expect(readFileSync(join(outside, 'bashrc'), 'utf8')).toBe('original\n');
      expect(existsSync(join(outside, 'created-by-write'))).toBe(false);
    });
  });
});

describe('readAtMost', () => {
  it('reads what a /proc file holds although stat says 0 bytes', async () => {
    const { handle, stats } = await openRegularFile('/proc/self/status', {
      access: 'read',
      followLink: true,
    });
    try {
      expect(stats.size).toBe(0);
      expect((await readAtMost(handle, 1 << 20, stats.size))!.toString('utf8')).toContain('Pid:');
    } finally {
      await handle.close();
    }
  });

  it('gives up past the cap whatever size the caller was told (a file that grew)', async () => {
    const dir = tempDir('ux-orf-');
    writeFileSync(join(dir, 'big'), Buffer.alloc(200_000, 1));
    const { handle } = await openRegularFile(join(dir, 'big'), { access: 'read', followLink: true });
    try {
      expect(await readAtMost(handle, 199_999, 10)).toBeUndefined();
    } finally {
      await handle.close();
    }
    const again = await openRegularFile(join(dir, 'big'), { access: 'read', followLink: true });
    try {
      expect((await readAtMost(again.handle, 200_000, 0))!.length).toBe(200_000);
    } finally {
      await again.handle.close();
    }
  });
});
