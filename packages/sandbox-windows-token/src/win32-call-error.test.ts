import { UxError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { Win32CallError } from './win32-api.js';

describe('Win32CallError', () => {
  it('is a UxError with the function and its Win32 error number', () => {
    const error = new Win32CallError('CreateRestrictedToken', 5);
    expect(UxError.isInstance(error)).toBe(true);
    expect(Win32CallError.isInstance(error)).toBe(true);
    expect(error.code).toBe('win32_call_failed');
    expect(error.win32Code).toBe(5);
    expect(error.message).toBe('CreateRestrictedToken failed with Win32 error 5 (ERROR_ACCESS_DENIED)');
  });
});
