import * as z from 'zod/v4';
import { isAbsolutePath } from './absolute-path.js';

const absolutePath = z
  .string()
  .refine(isAbsolutePath, { message: 'must be an absolute path' })
  .describe('An absolute path.');

/** Network for an external sandbox is decided outside ux; the flag only says what to assume. */
export const externalNetworkAccessSchema = z.enum(['restricted', 'enabled']);

/**
 * The classic sandbox policy, compatible with Codex's `SandboxPolicy` wire form (tag `type`, kebab-case).
 * Reads are allowed everywhere in all of them; they differ in writes and network.
 */
export const sandboxPolicySchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('danger-full-access') }),
  z.strictObject({
    type: z.literal('read-only'),
    network_access: z.boolean().default(false),
  }),
  z.strictObject({
    type: z.literal('workspace-write'),
    writable_roots: z.array(absolutePath).default([]),
    network_access: z.boolean().default(false),
    exclude_tmpdir_env_var: z.boolean().default(false),
    exclude_slash_tmp: z.boolean().default(false),
  }),
  z.strictObject({
    type: z.literal('external-sandbox'),
    network_access: externalNetworkAccessSchema.default('restricted'),
  }),
]);
export type SandboxPolicy = z.output<typeof sandboxPolicySchema>;
