import { UxError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from './connect-upstream.js';

describe('UpstreamError', () => {
  it('is a UxError that keeps its failure, addresses and cause', () => {
    const cause = new Error('ECONNREFUSED');
    const error = new UpstreamError('refused', 'could not connect to a:1', ['127.0.0.1'], { cause });
    expect(UxError.isInstance(error)).toBe(true);
    expect(UpstreamError.isInstance(error)).toBe(true);
    expect(UpstreamError.isInstance(new UxError('config_error', 'x'))).toBe(false);
    expect(error.code).toBe('upstream_connect_failed');
    expect(error.failure).toBe('refused');
    expect(error.addresses).toEqual(['127.0.0.1']);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('could not connect to a:1');
  });
});
