import { describe, expect, it } from 'vitest';
import { ControlError } from './control-error.js';
import { encodeControlMessage, parseControlRequest, parseControlServerLine } from './control-wire.js';

const problem = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    expect(ControlError.isInstance(error)).toBe(true);
    return `${(error as ControlError).controlCode}: ${(error as Error).message}`;
  }
  throw new Error('no error');
};

describe('the control wire', () => {
  it('reads a request, defaulting params to {}', () => {
    expect(parseControlRequest('{"v":1,"id":3,"method":"sessions.list"}')).toEqual({
      v: 1,
      id: 3,
      method: 'sessions.list',
      params: {},
    });
  });

  it.each([
    ['not json', 'bad_request: not JSON'],
    ['[1]', 'bad_request: a message must be a JSON object'],
    ['{"v":2,"id":1,"method":"hello"}', 'bad_request: unsupported protocol version 2; this ux speaks 1'],
    ['{"v":1,"id":-1,"method":"hello"}', 'bad_request: "id" must be a non-negative integer'],
    ['{"v":1,"id":1.5,"method":"hello"}', 'bad_request: "id" must be a non-negative integer'],
    [
      '{"v":1,"id":1,"method":"../x"}',
      'bad_request: "method" must be a name like "sessions.list", got "../x"',
    ],
    ['{"v":1,"id":1}', 'bad_request: "method" must be a name like "sessions.list", got undefined'],
  ])('refuses %s with a message naming the problem', (line, message) => {
    expect(problem(() => parseControlRequest(line))).toContain(message);
  });

  it('reads answers, errors and events from a server, and refuses anything else', () => {
    expect(parseControlServerLine('{"v":1,"id":1,"result":null}')).toEqual({ v: 1, id: 1, result: null });
    expect(parseControlServerLine('{"v":1,"id":2,"error":{"code":"not_found","message":"no"}}')).toEqual({
      v: 1,
      id: 2,
      error: { code: 'not_found', message: 'no' },
    });
    expect(parseControlServerLine('{"v":1,"event":"sessions.exit","params":{"session":1}}')).toEqual({
      v: 1,
      event: 'sessions.exit',
      params: { session: 1 },
    });
    expect(
      problem(() => parseControlServerLine('{"v":1,"id":2,"error":{"code":"weird","message":"x"}}')),
    ).toContain('neither "result" nor a well-formed "error"');
    expect(problem(() => parseControlServerLine('{"v":1,"result":1}'))).toContain('without an "id"');
  });

  it('writes one line per message', () => {
    expect(encodeControlMessage({ v: 1, event: 'a.b', params: { x: 'line\nbreak' } })).toBe(
      '{"v":1,"event":"a.b","params":{"x":"line\\nbreak"}}\n',
    );
  });
});
