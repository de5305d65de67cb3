import { describe, expect, it } from 'vitest';
import { execServerMethods } from './exec-server-methods.js';
import {
  execParamsSchema,
  exitedNotificationSchema,
  readParamsSchema,
  readResultSchema,
  signalParamsSchema,
  writeParamsSchema,
} from './process-methods.js';
import { sandboxContextSchema } from './sandbox-context.js';
import { UX_EXEC_SERVER_CAPABILITIES } from './ux-exec-server-capabilities.js';
import { parseWireMessage } from './wire-envelope.js';

describe('parseWireMessage', () => {
  it('classifies requests, notifications, responses and errors', () => {
    expect(parseWireMessage('{"id":1,"method":"initialize","params":{"clientName":"c"}}')).toEqual({
      kind: 'request',
      message: { id: 1, method: 'initialize', params: { clientName: 'c' } },
    });
    expect(parseWireMessage('{"jsonrpc":"2.0","method":"initialized"}')).toEqual({
      kind: 'notification',
      message: { method: 'initialized' },
    });
    expect(parseWireMessage('{"id":"a","result":{"running":false}}')).toEqual({
      kind: 'response',
      message: { id: 'a', result: { running: false } },
    });
    expect(parseWireMessage('{"id":6,"error":{"code":-32600,"message":"unknown process id nope"}}')).toEqual({
      kind: 'error',
      message: { id: 6, error: { code: -32600, message: 'unknown process id nope' } },
    });
  });

  it.each([
    ['{not json', /^not JSON: /],
    ['[{"id":1,"method":"x"}]', /^batches are not supported$/],
    ['{"id":null,"method":"x"}', /^id must be an integer or a string, got null$/],
    ['{"id":4.5,"method":"x"}', /^id must be an integer or a string, got 4.5$/],
    ['42', /^a message must be a JSON object$/],
    ['{"id":1}', /^a message needs a method, a result or an error$/],
    ['{"id":1,"error":{"code":"x"}}', /^malformed error response$/],
  ])('calls %s invalid', (line, reason) => {
    const parsed = parseWireMessage(line);
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.reason).toMatch(reason);
  });
});

describe('exec-server params', () => {
  const start = {
    processId: 'p1',
    argv: ['echo', 'hello'],
    cwd: 'file:///home/dev/proj',
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    arg0: null,
  };

  it('accepts the start params Codex sends and ignores unknown fields', () => {
    const parsed = execParamsSchema.parse({
      ...start,
      bogusField: 1,
      metadata: { threadId: 't', toolCallId: 'c' },
    });
    expect(parsed).toMatchObject(start);
    expect(parsed).not.toHaveProperty('bogusField');
  });

  it.each([
    [{ ...start, env: undefined }, 'missing field `env`'],
    [{ ...start, tty: undefined }, 'missing field `tty`'],
    [{ ...start, argv: [] }, 'argv must not be empty'],
  ])('rejects %j with the wire message', (params, message) => {
    const parsed = execParamsSchema.safeParse(params);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(message);
  });

  it('requires a non-empty writeId and valid base64', () => {
    expect(writeParamsSchema.safeParse({ processId: 'c', chunk: 'aGkK', writeId: '1' }).success).toBe(true);
    expect(
      writeParamsSchema.safeParse({ processId: 'c', chunk: 'aGkK', writeId: '' }).error?.issues[0]?.message,
    ).toBe('writeId must not be empty');
    expect(writeParamsSchema.safeParse({ processId: 'c', chunk: 'aGkK' }).error?.issues[0]?.message).toBe(
      'missing field `writeId`',
    );
    expect(
      writeParamsSchema.safeParse({ processId: 'c', chunk: '!!', writeId: '1' }).error?.issues[0]?.message,
    ).toBe('invalid base64');
  });

  it('refuses a sandbox context whose permissions it cannot read', () => {
    expect(sandboxContextSchema.safeParse({ permissions: { type: 'disabled' } }).success).toBe(false);
  });

  it('defaults sandboxDenied for legacy servers', () => {
    expect(
      readResultSchema.parse({
        chunks: [],
        nextSeq: 1,
        exited: false,
        exitCode: null,
        closed: false,
        failure: null,
      }),
    ).toMatchObject({ sandboxDenied: false });
    expect(exitedNotificationSchema.parse({ processId: 'p', seq: 2, exitCode: 0 })).toEqual({
      processId: 'p',
      seq: 2,
      exitCode: 0,
    });
  });

  it('lists a params and result schema for every method', () => {
    expect(Object.keys(execServerMethods)).toEqual(
      expect.arrayContaining([
        'initialize',
        'process/start',
        'process/read',
        'process/write',
        'process/signal',
        'process/terminate',
        'fs/getMetadata',
        'fs/readFile',
      ]),
    );
    expect(
      execServerMethods['process/signal'].params.safeParse({ processId: 'x', signal: 'terminate' }).success,
    ).toBe(false);
  });
});

describe('wire messages for bad params', () => {
  const start = { processId: 'p', argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false };

  it('says missing only for absent fields, and names the type otherwise', () => {
    expect(execParamsSchema.safeParse({ ...start, env: undefined }).error?.issues[0]?.message).toBe(
      'missing field `env`',
    );
    const wrongType = execParamsSchema.safeParse({ ...start, env: 'PATH=/bin' }).error?.issues[0];
    expect(wrongType?.path).toEqual(['env']);
    expect(wrongType?.message).not.toContain('missing');
    expect(wrongType?.message).toContain('expected record');
  });

  it('accepts maxBytes 0 and names an unknown signal', () => {
    expect(readParamsSchema.safeParse({ processId: 'p', maxBytes: 0 }).success).toBe(true);
    expect(readParamsSchema.safeParse({}).error?.issues[0]?.message).toBe('missing field `processId`');
    expect(
      signalParamsSchema.safeParse({ processId: 'p', signal: 'terminate' }).error?.issues[0]?.message,
    ).toBe('unknown variant "terminate", expected `interrupt`');
    expect(writeParamsSchema.safeParse({ processId: 'p', writeId: 'w' }).error?.issues[0]?.message).toBe(
      'missing field `chunk`',
    );
  });

  it('offers process/resize as a ux extension with bounded sizes', () => {
    const resize = execServerMethods['process/resize'].params;
    expect(resize.safeParse({ processId: 'p', rows: 30, cols: 100 }).success).toBe(true);
    expect(resize.safeParse({ processId: 'p', rows: 0, cols: 100 }).success).toBe(false);
    expect(UX_EXEC_SERVER_CAPABILITIES.processResize).toBe('uxProcessResize');
  });
});
