import { readFile } from 'node:fs/promises';

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a file as UTF-8 text. A file that is not valid UTF-8 is refused (error code `ENOTUTF8`)
 * rather than decoded lossily, so an update never rewrites a binary file with replacement characters.
 */
export async function readTextFile(
  path: string,
  read: (path: string) => Promise<Uint8Array> = readFile,
): Promise<string> {
  const bytes = await read(path);
  try {
    return decoder.decode(bytes);
  } catch (cause) {
    throw Object.assign(new Error(`${path} is not valid UTF-8 text`, { cause }), { code: 'ENOTUTF8' });
  }
}
