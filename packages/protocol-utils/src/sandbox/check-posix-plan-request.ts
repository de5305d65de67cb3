import type { SandboxPlanRequest } from '@ux/protocol/core';
import { InvalidArgumentsError, MissingCommandLineError } from '@ux/protocol/core';

/**
 * The checks every POSIX backend's `plan()` starts with, as the contract words them: an empty argv is
 * `MissingCommandLineError`; a relative cwd, or a descriptor to keep outside 10–1023, is
 * `InvalidArgumentsError` naming `tool` (`bwrap plan`, `landlock plan`).
 */
export function checkPosixPlanRequest(request: SandboxPlanRequest, tool: string): void {
  if (request.argv.length === 0) throw new MissingCommandLineError();
  if (!request.cwd.startsWith('/')) {
    throw new InvalidArgumentsError({
      tool,
      issues: [{ path: 'cwd', message: `must be absolute, got "${request.cwd}"` }],
    });
  }
  const badFd = request.keepFds?.find((fd) => !Number.isInteger(fd) || fd < 10 || fd > 1023);
  if (badFd !== undefined) {
    throw new InvalidArgumentsError({
      tool,
      issues: [
        {
          path: 'keepFds',
          message: `descriptors to keep must be whole numbers from 10 to 1023, got ${badFd}`,
        },
      ],
    });
  }
}
