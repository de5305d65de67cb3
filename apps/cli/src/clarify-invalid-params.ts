import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The SDK answers a request whose params fail its schema with -32603 and a dump of the schema issues;
 * JSON-RPC calls that "invalid params" (-32602), and a person should read one line. Any other message
 * is returned as it is.
 */
export function clarifyInvalidParams(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || message.error.code !== -32603) return message;
  let issues: unknown;
  try {
    issues = JSON.parse(message.error.message);
  } catch {
    return message;
  }
  if (!Array.isArray(issues) || issues.length === 0) return message;
  const described = issues.map(
    (issue: { path?: unknown[]; message?: string }) =>
      `${(issue.path ?? []).join('.') || '(root)'}: ${issue.message ?? 'invalid'}`,
  );
  return { ...message, error: { code: -32602, message: `Invalid params: ${described.join('; ')}` } };
}
