import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { OutgoingMessageTransport } from './outgoing-message-transport.js';

function fakeTransport() {
  const sent: JSONRPCMessage[] = [];
  const calls: string[] = [];
  const transport: Transport = {
    start: async () => void calls.push('start'),
    close: async () => void calls.push('close'),
    send: async (message) => void sent.push(message),
    sessionId: 'session-1',
  };
  return { transport, sent, calls };
}

describe('OutgoingMessageTransport', () => {
  it('rewrites what is sent and passes start and close through', async () => {
    const inner = fakeTransport();
    const outer = new OutgoingMessageTransport(inner.transport, (message) =>
      'result' in message ? { ...message, result: { rewritten: true } } : message,
    );
    await outer.start();
    await outer.send({ jsonrpc: '2.0', id: 1, result: {} });
    await outer.send({ jsonrpc: '2.0', method: 'notifications/progress' });
    await outer.close();
    expect(inner.sent).toEqual([
      { jsonrpc: '2.0', id: 1, result: { rewritten: true } },
      { jsonrpc: '2.0', method: 'notifications/progress' },
    ]);
    expect(inner.calls).toEqual(['start', 'close']);
    expect(outer.sessionId).toBe('session-1');
  });

  it('hands incoming messages, errors and the close to the callbacks the SDK sets on it', () => {
    const inner = fakeTransport();
    const outer = new OutgoingMessageTransport(inner.transport, (message) => message);
    const seen: string[] = [];
    // Set after construction, as the SDK's connect does.
    outer.onmessage = (message) => seen.push(`message ${'method' in message ? message.method : ''}`);
    outer.onerror = (error) => seen.push(`error ${error.message}`);
    outer.onclose = () => seen.push('close');
    inner.transport.onmessage?.({ jsonrpc: '2.0', id: 1, method: 'ping' });
    inner.transport.onerror?.(new Error('bad line'));
    inner.transport.onclose?.();
    expect(seen).toEqual(['message ping', 'error bad line', 'close']);
  });
});
