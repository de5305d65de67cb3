import * as z from 'zod/v4';
import { missingField } from './missing-field.js';

export const initializeParamsSchema = z.object({
  clientName: z.string({ error: missingField('clientName') }),
  resumeSessionId: z.string().nullable().optional(),
});
export type InitializeParams = z.output<typeof initializeParamsSchema>;

/** Capability flags default to false when absent; clients must ignore flags they do not know. */
export const environmentCapabilitiesSchema = z.record(z.string(), z.boolean());

export const environmentInfoSchema = z.object({
  shell: z.object({ name: z.string(), path: z.string() }).optional(),
  executorVersion: z.string().default('0.0.0'),
  providerId: z.string().optional(),
  cwd: z.string().optional(),
  userHomeDir: z.string().optional(),
  platformOs: z.string().optional(),
  prependPathDirs: z.array(z.string()).optional(),
  temporaryDirectories: z.array(z.string()).optional(),
  tempDir: z.string().optional(),
  capabilities: environmentCapabilitiesSchema.default({}),
});
export type EnvironmentInfo = z.output<typeof environmentInfoSchema>;

export const initializeResultSchema = z.object({
  sessionId: z.string(),
  /** Older servers omit it; clients then call `environment/info`. */
  environmentInfo: environmentInfoSchema.optional(),
});
export type InitializeResult = z.output<typeof initializeResultSchema>;

export const environmentStatusResultSchema = z.object({ status: z.string() });
export type EnvironmentStatusResult = z.output<typeof environmentStatusResultSchema>;
