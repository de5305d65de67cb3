import { InvalidArgumentsError, MissingCommandLineError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { validateRequest } from './validate-request.js';

const valid = { callId: 'c', argv: ['ls'], cwd: '/work', tty: false };

describe('validateRequest', () => {
  it('accepts a complete request', () => {
    expect(() => validateRequest(valid)).not.toThrow();
  });

  it('refuses an empty argv before anything else', () => {
    expect(() => validateRequest({ ...valid, argv: [], cwd: 'relative' })).toThrow(MissingCommandLineError);
  });

  it('lists every problem of the other fields in one error', () => {
    let caught: unknown;
    try {
      validateRequest({
        ...valid,
        callId: '',
        cwd: 'relative',
        additionalPermissions: { network: { enabled: true } },
      });
    } catch (error) {
      caught = error;
    }
    expect(InvalidArgumentsError.isInstance(caught)).toBe(true);
    const issues = (caught as InvalidArgumentsError).issues.map((issue) => issue.path);
    expect(issues).toEqual(['callId', 'cwd', 'additional_permissions']);
  });

  it('requires additional permissions exactly with with_additional_permissions', () => {
    expect(() => validateRequest({ ...valid, sandboxPermissions: 'with_additional_permissions' })).toThrow(
      /is required with sandbox_permissions/,
    );
    expect(() =>
      validateRequest({
        ...valid,
        sandboxPermissions: 'with_additional_permissions',
        additionalPermissions: { network: { enabled: true } },
      }),
    ).not.toThrow();
  });
});
