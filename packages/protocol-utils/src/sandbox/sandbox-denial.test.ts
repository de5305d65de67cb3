import { type DenialVerdict, SANDBOX_SPECIFICATION_VERSION, type SandboxBackend } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { isLikelySandboxDenied, isSandboxDenial } from './sandbox-denial.js';

/** A backend that only classifies (or has no classifier). */
function fakeBackend(
  id: string,
  options: { classify?: (evidence: { exitCode: number; output: string }) => DenialVerdict } = {},
): SandboxBackend {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms: ['linux'],
    probe: async () => ({ available: true }),
    plan: async () => {
      throw new Error('not planned here');
    },
    ...(options.classify ? { classifyDenial: options.classify } : {}),
  };
}

const check = (
  exitCode: number,
  output: string,
  extra: { sandboxed?: boolean; platform?: NodeJS.Platform } = {},
) =>
  isLikelySandboxDenied({
    sandboxed: extra.sandboxed ?? true,
    platform: extra.platform ?? 'linux',
    exitCode,
    output,
  });

describe('isLikelySandboxDenied (docs/reference/sandbox.md §9)', () => {
  it('is never a denial without a sandbox or with exit 0', () => {
    expect(check(1, 'Permission denied', { sandboxed: false })).toBe(false);
    expect(check(0, 'Permission denied')).toBe(false);
  });

  it.each([
    'touch: cannot touch: Operation not permitted',
    'bash: /etc/x: Permission denied',
    'mkdir: Read-only file system',
    'killed by SECCOMP',
    'sandbox: deny file-write',
    'Landlock restriction',
    'error: failed to write file',
    'ux: network access to "pypi.org" is not allowed by the sandbox\'s network policy',
    'curl: (56) CONNECT tunnel failed, response 403',
    'urllib.error.URLError: <urlopen error Tunnel connection failed: 403 Blocked by ux network policy>',
  ])('is a denial when the output says %j', (output) => {
    expect(check(1, output)).toBe(true);
  });

  it('checks keywords before the exit codes that mean ordinary failures', () => {
    expect(check(126, 'permission denied')).toBe(true);
    for (const code of [2, 126, 127]) expect(check(code, 'command not found'), String(code)).toBe(false);
  });

  it('counts a seccomp kill (128 + SIGSYS) on Linux only', () => {
    expect(check(159, '')).toBe(true);
    expect(check(159, '', { platform: 'darwin' })).toBe(false);
    expect(check(1, '')).toBe(false);
    expect(check(-1, '')).toBe(false);
  });

  it('reads stdout and stderr when given separately', () => {
    expect(
      isLikelySandboxDenied({
        sandboxed: true,
        platform: 'linux',
        exitCode: 1,
        output: '',
        stderr: 'EPERM: Operation not permitted',
      }),
    ).toBe(true);
    expect(
      isLikelySandboxDenied({
        sandboxed: true,
        platform: 'linux',
        exitCode: 1,
        output: '',
        stdout: 'sandbox says no',
      }),
    ).toBe(true);
  });
});

describe('isSandboxDenial', () => {
  const denied = { exitCode: 1, output: 'Permission denied' };
  const plainFailure = { exitCode: 1, output: 'test failed' };

  it('lets a sure classifier decide, and falls back to the heuristic otherwise', () => {
    expect(isSandboxDenial(fakeBackend('x', { classify: () => 'denied' }), plainFailure, 'linux')).toBe(true);
    expect(isSandboxDenial(fakeBackend('x', { classify: () => 'not_denied' }), denied, 'linux')).toBe(false);
    expect(isSandboxDenial(fakeBackend('x', { classify: () => 'unknown' }), denied, 'linux')).toBe(true);
    expect(isSandboxDenial(fakeBackend('x'), plainFailure, 'linux')).toBe(false);
    expect(isSandboxDenial(fakeBackend('x'), denied, 'linux')).toBe(true);
  });

  it('believes a remote host that already judged the exit a denial', () => {
    const backend = fakeBackend('x', { classify: () => 'not_denied' });
    expect(isSandboxDenial(backend, { ...plainFailure, sandboxDenied: true }, 'linux')).toBe(true);
    expect(isSandboxDenial(backend, { ...plainFailure, sandboxDenied: false }, 'linux')).toBe(false);
    expect(isSandboxDenial(backend, { exitCode: 0, output: '', sandboxDenied: true }, 'linux')).toBe(false);
  });

  it('never calls exit 0 a denial, and survives a classifier that throws', () => {
    expect(
      isSandboxDenial(fakeBackend('x', { classify: () => 'denied' }), { exitCode: 0, output: '' }, 'linux'),
    ).toBe(false);
    const broken = fakeBackend('x', {
      classify: () => {
        throw new Error('bug');
      },
    });
    expect(isSandboxDenial(broken, denied, 'linux')).toBe(true);
    expect(isSandboxDenial(broken, plainFailure, 'linux')).toBe(false);
  });
});
