import { InvalidArgumentsError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { createDoor } from './create-door.js';

describe('createDoor arguments', () => {
  it.each([['relative/dir'], [''], [undefined], [42]])(
    'refuses cwd %j with an error that names it, before anything is created',
    async (cwd) => {
      const error = await createDoor({ cwd } as never).catch((e: unknown) => e);
      expect(InvalidArgumentsError.isInstance(error)).toBe(true);
      expect((error as InvalidArgumentsError).code).toBe('invalid_arguments');
      expect((error as InvalidArgumentsError).issues[0]?.path).toBe('cwd');
      expect((error as Error).message).toBe(
        `invalid createDoor arguments: cwd: must be an absolute path (got ${JSON.stringify(cwd)})`,
      );
    },
  );
});
