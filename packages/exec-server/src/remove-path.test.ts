import { existsSync, mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { REMOVE_MAX_DEPTH, removePath } from './remove-path.js';

const ways = [
  { name: 'anchored on descriptors', anchorOnDescriptors: true },
  { name: 'path-checked', anchorOnDescriptors: false },
];

/** A directory no removal may touch, with `count` files in it. */
function canary(count = 20): string {
  const dir = tempDir('ux-rm-canary-');
  for (let i = 0; i < count; i += 1) writeFileSync(join(dir, `keep-${i}`), 'keep');
  return dir;
}

describe.each(ways)('removePath ($name)', ({ anchorOnDescriptors }) => {
  it('removes a tree and never what its links point to', async () => {
    const outside = canary();
    const root = tempDir('ux-rm-');
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'a/b'), { recursive: true });
    writeFileSync(join(tree, 'a/b/file'), 'x');
    symlinkSync(outside, join(tree, 'a/link-to-dir'));
    symlinkSync(join(outside, 'keep-0'), join(tree, 'a/b/link-to-file'));
    await removePath(tree, { recursive: true, anchorOnDescriptors });
    expect(existsSync(tree)).toBe(false);
    expect(readdirSync(outside)).toHaveLength(20);
  });

  it('removes a link itself, even to a directory, and a missing path is no error', async () => {
    const outside = canary();
    const root = tempDir('ux-rm-');
    symlinkSync(outside, join(root, 'link'));
    await removePath(join(root, 'link'), { recursive: true, anchorOnDescriptors });
    expect(existsSync(join(root, 'link'))).toBe(false);
    expect(readdirSync(outside)).toHaveLength(20);
    await removePath(join(root, 'missing'), { recursive: false, anchorOnDescriptors });
    await removePath(join(root, 'no/such/parent'), { recursive: true, anchorOnDescriptors });
  });

  it('refuses a directory without recursive, and leaves it whole', async () => {
    const root = tempDir('ux-rm-');
    mkdirSync(join(root, 'dir'));
    writeFileSync(join(root, 'dir/f'), 'x');
    await expect(
      removePath(join(root, 'dir'), { recursive: false, anchorOnDescriptors }),
    ).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ERR_FS_EISDIR)$/),
    });
    expect(existsSync(join(root, 'dir/f'))).toBe(true);
  });
});

describe('removePath (anchored on descriptors)', () => {
  it('refuses "/" and paths that end in . or ..', async () => {
    await expect(removePath('/', { recursive: true })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(removePath('/tmp/.', { recursive: true })).rejects.toMatchObject({ code: 'EINVAL' });
  });

  it(`stops at ${REMOVE_MAX_DEPTH} levels and says so`, async () => {
    const root = tempDir('ux-rm-');
    let deep = join(root, 'tree');
    const tree = deep;
    for (let i = 0; i <= REMOVE_MAX_DEPTH; i += 1) deep = join(deep, 'd');
    mkdirSync(deep, { recursive: true });
    await expect(removePath(tree, { recursive: true })).rejects.toThrow(
      `lies more than ${REMOVE_MAX_DEPTH} directories deep`,
    );
  });

  it('deletes nothing outside when a directory is swapped for a link after it was opened', async () => {
    const outside = canary();
    const root = tempDir('ux-rm-');
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'victim'), { recursive: true });
    for (let i = 0; i < 5; i += 1) writeFileSync(join(tree, 'victim', `f-${i}`), 'x');
    const swapped: string[] = [];
    await removePath(tree, {
      recursive: true,
      // The worst moment: the directory was found and opened; its path now leads to the canary.
      beforeListing: (path) => {
        if (path !== join(tree, 'victim') || swapped.length > 0) return;
        renameSync(join(tree, 'victim'), join(tree, 'moved'));
        symlinkSync(outside, join(tree, 'victim'));
        swapped.push(path);
      },
    });
    expect(swapped).toEqual([join(tree, 'victim')]);
    expect(readdirSync(outside)).toHaveLength(20);
    expect(existsSync(tree)).toBe(false);
  });
});
