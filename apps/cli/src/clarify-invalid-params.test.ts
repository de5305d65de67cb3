import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { clarifyInvalidParams } from './clarify-invalid-params.js';

describe('clarifyInvalidParams', () => {
  it('turns the SDK’s -32603 schema dump into one -32602 line', () => {
    const dump = JSON.stringify([
      { path: ['params', 'name'], message: 'Required' },
      { path: [], message: 'Unrecognized key' },
    ]);
    expect(clarifyInvalidParams({ jsonrpc: '2.0', id: 3, error: { code: -32603, message: dump } })).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'Invalid params: params.name: Required; (root): Unrecognized key' },
    });
  });

  it('leaves every other message as it is', () => {
    const messages: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'the server is shutting down' } },
      { jsonrpc: '2.0', id: 3, error: { code: -32603, message: '[]' } },
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: '[{"message":"x"}]' } },
      { jsonrpc: '2.0', method: 'notifications/progress' },
    ];
    for (const message of messages) expect(clarifyInvalidParams(message)).toBe(message);
  });
});
