import * as z from 'zod/v4';
import { missingField } from './missing-field.js';
import { sandboxContextSchema } from './sandbox-context.js';

/** A `file://` URI; a bare path is refused by the server, not here. */
const fileUri = z.string({ error: missingField('path') });
const sandbox = sandboxContextSchema.nullable().optional();

export const fsReadFileParamsSchema = z.object({
  path: fileUri,
  followSymlinks: z.boolean().optional(),
  sandbox,
});
export const fsReadFileResultSchema = z.object({ dataBase64: z.string() });
export const fsWriteFileParamsSchema = z.object({
  path: fileUri,
  dataBase64: z.string({ error: missingField('dataBase64') }),
  followSymlinks: z.boolean().optional(),
  sandbox,
});
export const fsGetMetadataParamsSchema = z.object({
  path: fileUri,
  followSymlinks: z.boolean().optional(),
  sandbox,
});
export const fsGetMetadataResultSchema = z.object({
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  isSymlink: z.boolean(),
  size: z.number(),
  createdAtMs: z.number(),
  modifiedAtMs: z.number(),
});
export const fsReadDirectoryParamsSchema = z.object({ path: fileUri, sandbox });
export const fsReadDirectoryResultSchema = z.object({
  entries: z.array(z.object({ fileName: z.string(), isDirectory: z.boolean(), isFile: z.boolean() })),
});
export const fsCanonicalizeParamsSchema = z.object({ path: fileUri, sandbox });
export const fsCanonicalizeResultSchema = z.object({ path: fileUri });
export const fsCreateDirectoryParamsSchema = z.object({
  path: fileUri,
  recursive: z.boolean().optional(),
  followSymlinks: z.boolean().optional(),
  sandbox,
});
export const fsRemoveParamsSchema = z.object({
  path: fileUri,
  recursive: z.boolean().optional(),
  force: z.boolean().optional(),
  followSymlinks: z.boolean().optional(),
  sandbox,
});

export type FsReadFileParams = z.output<typeof fsReadFileParamsSchema>;
export type FsReadFileResult = z.output<typeof fsReadFileResultSchema>;
export type FsWriteFileParams = z.output<typeof fsWriteFileParamsSchema>;
export type FsGetMetadataParams = z.output<typeof fsGetMetadataParamsSchema>;
export type FsGetMetadataResult = z.output<typeof fsGetMetadataResultSchema>;
export type FsReadDirectoryParams = z.output<typeof fsReadDirectoryParamsSchema>;
export type FsReadDirectoryResult = z.output<typeof fsReadDirectoryResultSchema>;
export type FsCanonicalizeParams = z.output<typeof fsCanonicalizeParamsSchema>;
export type FsCanonicalizeResult = z.output<typeof fsCanonicalizeResultSchema>;
export type FsCreateDirectoryParams = z.output<typeof fsCreateDirectoryParamsSchema>;
export type FsRemoveParams = z.output<typeof fsRemoveParamsSchema>;
