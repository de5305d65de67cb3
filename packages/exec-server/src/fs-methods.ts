import { lstat, mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import {
  fileUriFromPath,
  fsCanonicalizeParamsSchema,
  fsCreateDirectoryParamsSchema,
  fsGetMetadataParamsSchema,
  fsReadDirectoryParamsSchema,
  fsReadFileParamsSchema,
  fsRemoveParamsSchema,
  fsWriteFileParamsSchema,
  isBase64,
  pathFromFileUri,
  type SandboxContext,
} from '@ux/protocol';
import { parseParams } from './parse-params.js';
import { decodeParams, internalError, invalidParams, notFound, RpcError } from './rpc-error.js';

/** Largest file `fs/readFile` returns in one response (the wire carries base64 in one message). */
const MAX_READ_FILE_BYTES = 32 * 1024 * 1024;

/**
 * The `fs/*` methods a Codex client uses on an environment (AGENTS.md, skills, metadata probes), on
 * this host's files. A request that carries a sandbox is refused: this server does not confine its own
 * file access, and it will not pretend to.
 */
export const fsMethods: Record<string, (params: unknown) => Promise<unknown>> = {
  'fs/readFile': async (raw) => {
    const params = parseParams(fsReadFileParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    return guard(async () => {
      const info = await stat(path);
      if (info.size > MAX_READ_FILE_BYTES) {
        throw internalError(
          `${path} holds ${info.size} bytes; fs/readFile returns at most ${MAX_READ_FILE_BYTES}`,
        );
      }
      return { dataBase64: (await readFile(path)).toString('base64') };
    });
  },
  'fs/writeFile': async (raw) => {
    const params = parseParams(fsWriteFileParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    if (!isBase64(params.dataBase64)) {
      throw invalidParams('dataBase64: invalid base64');
    }
    return guard(async () => {
      await writeFile(path, Buffer.from(params.dataBase64, 'base64'));
      return {};
    });
  },
  'fs/getMetadata': async (raw) => {
    const params = parseParams(fsGetMetadataParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    return guard(async () => {
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
    return guard(async () => ({
      entries: (await readdir(path, { withFileTypes: true })).map((entry) => ({
        fileName: entry.name,
        isDirectory: entry.isDirectory(),
        isFile: entry.isFile(),
      })),
    }));
  },
  'fs/canonicalize': async (raw) => {
    const params = parseParams(fsCanonicalizeParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    return guard(async () => ({ path: fileUriFromPath(await realpath(path)) }));
  },
  'fs/createDirectory': async (raw) => {
    const params = parseParams(fsCreateDirectoryParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    // Codex 0.169.0 creates the parents even without `recursive`.
    return guard(async () => {
      await mkdir(path, { recursive: true });
      return {};
    });
  },
  'fs/remove': async (raw) => {
    const params = parseParams(fsRemoveParamsSchema, raw);
    const path = target(params.path, params.sandbox);
    // Codex 0.169.0: removing a missing path succeeds even without `force`.
    return guard(async () => {
      await rm(path, { recursive: params.recursive === true, force: true });
      return {};
    });
  },
};

function target(uri: string, sandbox: SandboxContext | null | undefined): string {
  if (sandbox && sandbox.permissions.type !== 'disabled') {
    throw invalidParams(
      'fs methods with a sandbox are not supported by this exec-server; send "sandbox": null (its file access is not confined)',
    );
  }
  return decodeParams(() => pathFromFileUri(uri, 'path'));
}

async function guard<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RpcError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const message = (error as Error).message;
    if (code === 'ENOENT') throw notFound(`No such file or directory: ${message}`);
    throw internalError(message);
  }
}
