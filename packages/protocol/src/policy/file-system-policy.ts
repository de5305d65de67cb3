import * as z from 'zod/v4';
import { specialPathNames } from './special-path-names.js';

export { type SpecialPathName, specialPathNames } from './special-path-names.js';

/** Access to a path. At equal specificity `none` beats `write`, which beats `read`. */
export const fileSystemAccessSchema = z.enum(['read', 'write', 'none']);
export type FileSystemAccess = z.output<typeof fileSystemAccessSchema>;

export const fileSystemPathSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('path'),
    path: z.string().min(1).describe('Absolute, ~-relative, or relative to the cwd.'),
  }),
  z.strictObject({
    type: z.literal('glob'),
    pattern: z
      .string()
      .min(1)
      .describe('Git-style glob (`*`, `?`, `[..]`, `**/`); relative patterns are anchored at the cwd.'),
  }),
  z.strictObject({
    type: z.literal('special'),
    value: z.enum(specialPathNames),
    subpath: z.string().min(1).optional().describe('A relative path below the special location.'),
  }),
]);
export type FileSystemPath = z.output<typeof fileSystemPathSchema>;

export const fileSystemEntrySchema = z.strictObject({
  path: fileSystemPathSchema,
  access: fileSystemAccessSchema,
});
export type FileSystemEntry = z.output<typeof fileSystemEntrySchema>;

/**
 * The split file-system policy: `unrestricted` (no file-system sandbox), `external-sandbox` (an outer
 * sandbox enforces it), or `restricted` with entries where the most specific path or glob wins.
 */
export const fileSystemPolicySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('unrestricted') }),
  z.strictObject({ kind: z.literal('external-sandbox') }),
  z.strictObject({
    kind: z.literal('restricted'),
    entries: z.array(fileSystemEntrySchema),
    glob_scan_max_depth: z.number().int().min(1).max(64).optional(),
  }),
]);
export type FileSystemPolicy = z.output<typeof fileSystemPolicySchema>;

/** Network for sandboxed commands: `restricted` (no sockets beyond local unix pairs) or `enabled`. */
export const networkPolicySchema = z.enum(['restricted', 'enabled']);
export type NetworkPolicy = z.output<typeof networkPolicySchema>;

/** What a sandbox is asked to enforce for one command. */
export interface EffectivePolicy {
  fileSystem: FileSystemPolicy;
  network: NetworkPolicy;
}
