import { InvalidArgumentsError } from '../errors/errors.js';

/**
 * The error of a wire value that cannot be read: one issue at `field`, whose message names the field
 * itself, so a server can answer with the issue messages as they are (`describeWireIssues`).
 */
export function invalidWireValue(field: string, message: string): InvalidArgumentsError {
  return new InvalidArgumentsError({ tool: 'exec-server', issues: [{ path: field, message }] });
}

/** The text a server answers a decoding error with: its issue messages, which name their fields. */
export function describeWireIssues(error: InvalidArgumentsError): string {
  return error.issues.map((issue) => issue.message).join('; ');
}
