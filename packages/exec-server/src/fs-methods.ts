import { lstat, mkdir, opendir, realpath, stat } from 'node:fs/promises';
import {
  fsCanonicalizeParamsSchema,
  fsCreateDirectoryParamsSchema,
  fsGetMetadataParamsSchema,
  fsReadDirectoryParamsSchema,
  fsReadFileParamsSchema,
  fsRemoveParamsSchema,
  fsWriteFileParamsSchema,
  isBase64,
  type SandboxContext,
} from '@ux/protocol';
import { fileUriFromPath, pathFromFileUri } from '@ux/protocol-utils';
import { MAX_DIRECTORY_ENTRIES, MAX_READ_FILE_BYTES } from './exec-server-constants.js';
import { NotRegularFileError, openRegularFile, readAtMost } from './open-regular-file.js';
import { parseParams } from './parse-params.js';
import { removePath } from './remove-path.js';
import { decodeParams, internalError, invalidParams, notFound, RpcError } from './rpc-error.js';

/**
 * The `fs/*` methods a Codex client uses on an environment (AGENTS.md, skills, metadata probes), on
 * this host's files. A request that carries a sandbox is refused: this server does not confine its own
 * file access, and it will not pretend to.
 *
 * The files they touch may have been planted by a sandboxed command (docs/exec-server.md, "Files a
 * sandbox planted"), so none of them can make the server wait or grow without bound: reads and writes
 * open regular files only (non-blocking; a FIFO, a device, a socket is refused without being opened),
 * a read takes at most `MAX_READ_FILE_BYTES` from the descriptor whatever `stat` says, a write never
 * goes through a symbolic link, a removal never follows one, a listing stops at
 * `MAX_DIRECTORY_ENTRIES`.
 */
export const fsMethods: Record<string, (params: unknown) => Promise<unknown>> = {
  'fs/readFile': async (raw) => {
    const params = parseParams(fsReadFileParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    return guard('fs/readFile', async () => {
      const { handle, stats } = await openRegularFile(path, {
        access: 'read',
        followLink: params.followSymlinks !== false,
      });
      try {
        if (stats.size > MAX_READ_FILE_BYTES) throw tooLarge(path, `holds ${stats.size} bytes`);
        const data = await readAtMost(handle, MAX_READ_FILE_BYTES, stats.size);
        if (!data) throw tooLarge(path, 'grew past that while it was read');
        return { dataBase64: data.toString('base64') };
      } finally {
        await handle.close();
      }
    });
  },
  'fs/writeFile': async (raw) => {
    const params = parseParams(fsWriteFileParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    if (!isBase64(params.dataBase64)) {
      throw invalidParams('dataBase64: invalid base64');
    }
    return guard('fs/writeFile', async () => {
      // Never through a link: a sandboxed command could have put one where the client meant a file.
      const { handle } = await openRegularFile(path, { access: 'write', followLink: false });
      try {
        await handle.writeFile(Buffer.from(params.dataBase64, 'base64'));
      } finally {
        await handle.close();
      }
      return {};
    });
  },
  'fs/getMetadata': async (raw) => {
    const params = parseParams(fsGetMetadataParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    // lstat and stat open nothing: a FIFO or a device is described, never waited on.
    return guard('fs/getMetadata', async () => {
      const link = await lstat(path);
      const info = link.isSymbolicLink() && params.followSymlinks !== false ? await stat(path) : link;
      return {
        isDirectory: info.isDirectory(),
        isFile: info.isFile(),
        isSymlink: link.isSymbolicLink(),
        size: info.size,
        createdAtMs: Math.trunc(info.birthtimeMs),
        modifiedAtMs: Math.trunc(info.mtimeMs),
      };
    });
  },
  'fs/readDirectory': async (raw) => {
    const params = parseParams(fsReadDirectoryParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    return guard('fs/readDirectory', async () => ({ entries: await readDirectoryEntries(path) }));
  },
  'fs/canonicalize': async (raw) => {
    const params = parseParams(fsCanonicalizeParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    return guard('fs/canonicalize', async () => ({ path: fileUriFromPath(await realpath(path)) }));
  },
  'fs/createDirectory': async (raw) => {
    const params = parseParams(fsCreateDirectoryParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    // Codex 0.169.0 creates the parents even without `recursive`.
    return guard('fs/createDirectory', async () => {
      await mkdir(path, { recursive: true });
      return {};
    });
  },
  'fs/remove': async (raw) => {
    const params = parseParams(fsRemoveParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    // Codex 0.169.0: removing a missing path succeeds even without `force`. A link is removed itself,
    // never followed, at any depth.
    return guard('fs/remove', async () => {
      await removePath(path, { recursive: params.recursive === true });
      return {};
    });
  },
};

/**
 * The entries of a directory, at most `max` (more is an error naming the path, not a truncated list).
 * `opendir` opens with `O_DIRECTORY`: anything but a directory fails at once (`ENOTDIR`), never waits.
 */
export async function readDirectoryEntries(
  path: string,
  max = MAX_DIRECTORY_ENTRIES,
): Promise<{ fileName: string; isDirectory: boolean; isFile: boolean }[]> {
  const dir = await opendir(path, { bufferSize: 256 });
  const entries: { fileName: string; isDirectory: boolean; isFile: boolean }[] = [];
  try {
    for await (const entry of dir) {
      if (entries.length === max) {
        throw internalError(
          `fs/readDirectory: ${path} holds more than ${max} entries; fs/readDirectory returns at most ${max}`,
        );
      }
      entries.push({ fileName: entry.name, isDirectory: entry.isDirectory(), isFile: entry.isFile() });
    }
  } finally {
    // Iterating to the end closes it; an early exit leaves it open.
    await dir.close().catch(() => {});
  }
  return entries;
}

function target(uri: string, sandbox: SandboxContext | null | undefined): string {
  if (sandbox && sandbox.permissions.type !== 'disabled') {
    throw invalidParams(
      'fs methods with a sandbox are not supported by this exec-server; send "sandbox": null (its file access is not confined)',
    );
  }
  return decodeParams(() => pathFromFileUri(uri, 'path'));
}

function tooLarge(path: string, what: string): RpcError {
  return internalError(
    `fs/readFile: ${path} ${what}; fs/readFile returns at most ${MAX_READ_FILE_BYTES} bytes`,
  );
}

async function guard<T>(method: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (RpcError.isInstance(error)) throw error;
    if (NotRegularFileError.isInstance(error)) throw internalError(notRegularMessage(method, error));
    const code = (error as NodeJS.ErrnoException).code;
    const message = (error as Error).message;
    if (code === 'ENOENT') throw notFound(`No such file or directory: ${message}`);
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK')
      throw internalError(`${method}: ${message} (it would have made the server wait; refused)`);
    throw internalError(message);
  }
}

function notRegularMessage(method: string, error: NotRegularFileError): string {
  if (method === 'fs/writeFile' && error.kind === 'a symbolic link')
    return `fs/writeFile: ${error.message}; fs/writeFile does not write through a link (a sandboxed command could have planted it): resolve it with fs/canonicalize, check where it leads, and write that path`;
  if (error.kind === 'a symbolic link') return `${method}: ${error.message}, and followSymlinks is false`;
  const verb = method === 'fs/writeFile' ? 'writes' : 'reads';
  return `${method}: ${error.message}, not a regular file; ${method} ${verb} regular files only`;
}
