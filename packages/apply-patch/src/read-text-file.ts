import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Largest file a patch reads (a source file larger than this is not what the format is for). */
export const MAX_PATCH_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads a file as UTF-8 text. A file that is not valid UTF-8 is refused (error code `ENOTUTF8`)
 * rather than decoded lossily, so an update never rewrites a binary file with replacement characters.
 *
 * The default reader is safe against what a sandboxed command can plant under a file's name (the
 * door reads outside the sandbox): it opens without blocking, checks the OPENED file is a regular file
 * (a FIFO would block the door forever, a link to `/dev/zero` would fill its memory) and reads at most
 * `MAX_PATCH_FILE_BYTES` from the descriptor (error code `EFBIG` beyond).
 */
export async function readTextFile(
  path: string,
  read: (path: string) => Promise<Uint8Array> = readRegularFile,
): Promise<string> {
  const bytes = await read(path);
  try {
    return decoder.decode(bytes);
  } catch (cause) {
    throw Object.assign(new Error(`${path} is not valid UTF-8 text`, { cause }), { code: 'ENOTUTF8' });
  }
}

/**
 * The bytes of a regular file, read through the descriptor it was opened as (`O_NONBLOCK`, no
 * controlling terminal): anything else (FIFO, device, socket, directory) is refused with `ENOTREG`,
 * more than `limit` bytes with `EFBIG`. `flags` adds open flags (`O_NOFOLLOW`).
 */
export async function readRegularFile(
  path: string,
  options: { limit?: number; flags?: number } = {},
): Promise<Buffer> {
  const limit = options.limit ?? MAX_PATCH_FILE_BYTES;
  const handle = await open(
    path,
    constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (options.flags ?? 0),
  );
  try {
    const stat = await handle.stat();
    if (!stat.isFile())
      throw Object.assign(new Error(`${path} is ${kindOf(stat)}, not a regular file`), { code: 'ENOTREG' });
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, limit + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > limit)
        throw Object.assign(new Error(`${path} holds more than ${limit} bytes`), { code: 'EFBIG' });
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

function kindOf(stat: import('node:fs').Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a directory';
  return 'not a regular file';
}
