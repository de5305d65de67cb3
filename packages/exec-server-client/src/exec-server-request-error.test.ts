import { UxError, WireErrorCode } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { ExecServerRequestError } from './exec-server-client.js';

describe('ExecServerRequestError', () => {
  it('is a UxError whose JSON-RPC code is wireCode, recognised by its marker', () => {
    const error = new ExecServerRequestError(
      'process/start',
      WireErrorCode.TransportClosed,
      'connection lost',
    );
    expect(UxError.isInstance(error)).toBe(true);
    expect(ExecServerRequestError.isInstance(error)).toBe(true);
    expect(error.code).toBe('exec_server_request_failed');
    expect(error.wireCode).toBe(WireErrorCode.TransportClosed);
    expect(error.transportClosed).toBe(true);
    expect(
      new ExecServerRequestError('fs/readFile', WireErrorCode.InvalidParams, 'bad').transportClosed,
    ).toBe(false);
    expect(ExecServerRequestError.isInstance(new UxError('spawn_failed', 'x'))).toBe(false);
    expect(error.toJSON()).toMatchObject({
      method: 'process/start',
      wireCode: WireErrorCode.TransportClosed,
    });
  });
});
