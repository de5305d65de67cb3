import { UxError, WireErrorCode } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { NotRegularFileError } from './open-regular-file.js';
import { invalidParams, RpcError } from './rpc-error.js';

describe('the exec-server errors', () => {
  it('are UxErrors with codes that say what happened', () => {
    const rpc = invalidParams('bad path');
    expect(RpcError.isInstance(rpc)).toBe(true);
    expect(UxError.isInstance(rpc)).toBe(true);
    expect(rpc.code).toBe('exec_server_request_failed');
    expect(rpc.wireCode).toBe(WireErrorCode.InvalidParams);

    const notRegular = new NotRegularFileError('/w/a', 'a FIFO (named pipe)');
    expect(NotRegularFileError.isInstance(notRegular)).toBe(true);
    expect(RpcError.isInstance(notRegular)).toBe(false);
    expect(notRegular.code).toBe('not_regular_file');
    expect(notRegular.message).toBe('/w/a is a FIFO (named pipe)');
    expect(new NotRegularFileError('/w/l', 'a character device', '/dev/zero').message).toBe(
      '/w/l (a link to /dev/zero) is a character device',
    );
  });
});
