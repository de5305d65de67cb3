import { invalidParams } from './rpc-error.js';

interface Issue {
  path: PropertyKey[];
  message: string;
}

interface ParamsSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: Issue[] } };
}

/**
 * Validates a request's params; a mismatch is a -32602 error naming every problem. The protocol's own
 * messages (`missing field \`env\``, `argv must not be empty`) stand alone; schema defaults
 * (`Invalid input: …`) are prefixed with the field they are about.
 */
export function parseParams<T>(schema: ParamsSchema<T>, params: unknown): T {
  const parsed = schema.safeParse(params === undefined ? {} : params);
  if (parsed.success) return parsed.data;
  throw invalidParams(parsed.error.issues.map(describeIssue).join('; '));
}

function describeIssue(issue: Issue): string {
  const path = issue.path.map(String).join('.');
  if (!/^(Invalid|Too|Unrecognized)/.test(issue.message)) return issue.message;
  return `${path || 'params'}: ${issue.message}`;
}
