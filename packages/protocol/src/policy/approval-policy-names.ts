import type { ApprovalPolicy, GranularApprovalConfig } from './approval-policy.js';

// The approval policy's names and defaults without its schema, for code that must start fast
// (`@ux/protocol/core`). approval-policy.ts builds the schema from these.

export const simpleApprovalPolicies = ['untrusted', 'on-failure', 'on-request', 'never'] as const;
export type SimpleApprovalPolicy = (typeof simpleApprovalPolicies)[number];

/** Every approval policy name, as used by `allowed_approval_policies` in managed requirements. */
export const approvalPolicyNames = [...simpleApprovalPolicies, 'granular'] as const;
export type ApprovalPolicyName = (typeof approvalPolicyNames)[number];

/** The kinds of prompt a granular approval policy switches on or off; each defaults to on. */
export const granularPromptKinds = [
  'sandbox_approval',
  'rules',
  'skill_approval',
  'request_permissions',
  'mcp_elicitations',
] as const;
export type GranularPromptKind = (typeof granularPromptKinds)[number];

/** A granular table with every prompt kind not given switched on, as the schema's defaults do. */
export function granularApprovalConfig(
  given: Partial<Record<GranularPromptKind, boolean>> = {},
): GranularApprovalConfig {
  const config = {} as GranularApprovalConfig;
  for (const kind of granularPromptKinds) config[kind] = given[kind] ?? true;
  return config;
}

export function approvalPolicyName(policy: ApprovalPolicy): ApprovalPolicyName {
  return typeof policy === 'string' ? policy : 'granular';
}
