import { describe, expect, it } from 'vitest';
import { networkAccessEvent } from './network-access-event.js';

describe('networkAccessEvent', () => {
  it('carries host, port, decision, who decided and the bytes, in the protocol’s names', () => {
    expect(
      networkAccessEvent({
        id: 7,
        host: 'denied.test',
        port: 443,
        protocol: 'https',
        decision: 'denied',
        decidedBy: 'policy',
        denial: 'deny_list',
        bytesUp: 0,
        bytesDown: 0,
        startedAt: 1_000,
        endedAt: 1_012,
      }),
    ).toEqual({
      type: 'network_access',
      host: 'denied.test',
      port: 443,
      protocol: 'https',
      decision: 'denied',
      decided_by: 'policy',
      denial: 'deny_list',
      bytes_up: 0,
      bytes_down: 0,
      duration_ms: 12,
    });
  });

  it('keeps the address and the upstream error when there are some', () => {
    const event = networkAccessEvent({
      id: 1,
      host: 'allowed.test',
      port: 80,
      protocol: 'http',
      decision: 'asked_allowed',
      decidedBy: 'ask',
      address: '127.0.0.1',
      bytesUp: 120,
      bytesDown: 4096,
      startedAt: 5,
      endedAt: 5,
      error: 'connection reset',
    });
    expect(event).toMatchObject({ address: '127.0.0.1', error: 'connection reset', bytes_down: 4096 });
  });
});
