import { InvalidArgumentsError, isAbsolutePath, MissingCommandLineError } from '@ux/protocol/core';
import type { OrchestratorRequest } from './orchestrator-request.js';

/**
 * The request's own checks, before anything is decided: an argv, a call id, an absolute cwd, and
 * additional permissions exactly when `with_additional_permissions` asks for them.
 */
export function validateRequest(request: OrchestratorRequest): void {
  if (request.argv.length === 0) throw new MissingCommandLineError();
  const issues: { path: string; message: string }[] = [];
  if (request.callId === '') issues.push({ path: 'callId', message: 'must not be empty' });
  if (!isAbsolutePath(request.cwd))
    issues.push({ path: 'cwd', message: `must be an absolute path, got "${request.cwd}"` });
  const additional = request.sandboxPermissions === 'with_additional_permissions';
  if (additional && !request.additionalPermissions) {
    issues.push({
      path: 'additional_permissions',
      message: 'is required with sandbox_permissions "with_additional_permissions"',
    });
  }
  if (!additional && request.additionalPermissions) {
    issues.push({
      path: 'additional_permissions',
      message: 'is only allowed with sandbox_permissions "with_additional_permissions"',
    });
  }
  if (issues.length > 0) throw new InvalidArgumentsError({ tool: 'exec_command', issues });
}
