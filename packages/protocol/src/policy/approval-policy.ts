import * as z from 'zod/v4';
import { type GranularPromptKind, simpleApprovalPolicies } from './approval-policy-names.js';

/**
 * Which prompts a granular approval policy may raise. `false` turns that kind of prompt into a
 * rejection instead of a question.
 */
export const granularApprovalConfigSchema = z.strictObject({
  sandbox_approval: z
    .boolean()
    .default(true)
    .describe('May ask to retry a sandbox denial without the sandbox.'),
  rules: z.boolean().default(true).describe('May ask when an exec-policy rule says "prompt".'),
  skill_approval: z.boolean().default(true).describe('May ask before running a skill script.'),
  request_permissions: z.boolean().default(true).describe('May ask to grant additional permissions.'),
  mcp_elicitations: z.boolean().default(true).describe('May forward MCP elicitations to the user.'),
});
export type GranularApprovalConfig = z.output<typeof granularApprovalConfigSchema>;
// The zod-free list of prompt kinds (approval-policy-names.ts) must name exactly these keys.
granularApprovalConfigSchema.shape satisfies Record<GranularPromptKind, unknown>;

/**
 * When the user is asked before a command runs:
 * - `untrusted`: everything but known-safe read-only commands asks first;
 * - `on-failure` (deprecated upstream): run sandboxed, ask to retry unsandboxed after a denial;
 * - `on-request` (the default): the model asks for escalation when it needs it;
 * - `never`: never ask; what would need approval is rejected;
 * - `granular`: like `on-request`, with each kind of prompt switched on or off.
 */
export const approvalPolicySchema = z.union([
  z.enum(simpleApprovalPolicies),
  z.strictObject({ granular: granularApprovalConfigSchema }),
]);
export type ApprovalPolicy = z.output<typeof approvalPolicySchema>;
