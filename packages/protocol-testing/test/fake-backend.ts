// A sandbox backend for the conformance suite's own tests: it plans faithfully and enforces nothing.
// Not exported from the package.
import {
  type LaunchPlan,
  MissingCommandLineError,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxPlanRequest,
  UxError,
} from '@ux/protocol/core';

/** A planner that follows the contract but enforces nothing; `overrides` break one part at a time. */
export function fakeBackend(
  overrides: Partial<SandboxBackend> & { available?: boolean } = {},
): SandboxBackend {
  const { available = false, ...rest } = overrides;
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'fake',
    platforms: ['linux', 'darwin', 'win32'],
    probe: async () =>
      available ? { available: true } : { available: false, reason: 'fake backend', fix: 'none needed' },
    async plan(request: SandboxPlanRequest): Promise<LaunchPlan> {
      if (request.argv.length === 0) throw new MissingCommandLineError();
      if (!request.cwd.startsWith('/') && !/^[A-Za-z]:\\/.test(request.cwd)) {
        throw new UxError('invalid_arguments', 'cwd must be absolute');
      }
      return {
        argv: [...request.argv],
        cwd: request.cwd,
        env: { ...request.env, FAKE_SANDBOX: '1' },
        sandboxType: 'fake',
        enforcement: { fileSystem: 'enforced', network: 'enforced', notes: [] },
      };
    },
    classifyDenial: (evidence) => (evidence.exitCode === 0 ? 'not_denied' : 'unknown'),
    ...rest,
  };
}
