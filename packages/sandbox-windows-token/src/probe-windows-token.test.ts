import { describe, expect, it } from 'vitest';
import { probeWindowsToken, type WindowsTokenProbeHost } from './probe-windows-token.js';
import { type Win32Api, Win32CallError } from './win32-api.js';

function host(overrides: Partial<WindowsTokenProbeHost> = {}, api: Partial<Win32Api> = {}) {
  const calls: string[] = [];
  const value: WindowsTokenProbeHost = {
    platform: 'win32',
    exists: () => true,
    osRelease: () => '10.0.26100',
    loadApi: async () =>
      ({
        openProcessToken: () => {
          calls.push('OpenProcessToken');
          return 'base';
        },
        createRestrictedToken: (_token: unknown, flags: number, sids: readonly string[]) => {
          calls.push(`CreateRestrictedToken 0x${flags.toString(16)} ${sids.join(',')}`);
          return 'restricted';
        },
        closeHandle: (handle: unknown) => calls.push(`CloseHandle ${String(handle)}`),
        ...api,
      }) as Win32Api,
    ...overrides,
  };
  return { value, calls };
}

describe('probeWindowsToken', () => {
  it('answers "not on this platform" off Windows without loading anything', async () => {
    let loaded = false;
    const probe = await probeWindowsToken(
      host({
        platform: 'linux',
        loadApi: async () => {
          loaded = true;
          return {} as Win32Api;
        },
      }).value,
      'L',
    );
    expect(probe).toEqual({
      available: false,
      reason: 'not on this platform (the restricted-token sandbox needs Windows; this is linux)',
      fix: 'use @ux/sandbox-bwrap on Linux or @ux/sandbox-seatbelt on macOS',
    });
    expect(loaded).toBe(false);
  });

  it('is available when a write-restricted token can be made, and says the network is advisory', async () => {
    const { value, calls } = host();
    expect(await probeWindowsToken(value, 'C:\\ux\\launcher.js')).toEqual({
      available: true,
      version: 'Windows 10.0.26100',
      details: { fileSystem: 'enforced', network: 'advisory' },
      // Writes only: reads, the network and a private temporary directory are not enforced here.
      enforces: ['write_limits', 'protected_names'],
    });
    expect(calls).toEqual([
      'OpenProcessToken',
      'CreateRestrictedToken 0xd S-1-1-0',
      'CloseHandle restricted',
      'CloseHandle base',
    ]);
  });

  it('says what is missing: the launcher, koffi, or the right to restrict a token', async () => {
    expect(await probeWindowsToken(host({ exists: () => false }).value, 'C:\\ux\\launcher.js')).toMatchObject(
      {
        available: false,
        reason: 'the launcher C:\\ux\\launcher.js is missing',
        fix: expect.stringContaining('build'),
      },
    );
    expect(
      await probeWindowsToken(
        host({ loadApi: async () => Promise.reject(new Error('no koffi')) }).value,
        'L',
      ),
    ).toMatchObject({
      available: false,
      reason: 'the Win32 API could not be bound: no koffi',
    });
    const denied = host(
      {},
      {
        createRestrictedToken: () => {
          throw new Win32CallError('CreateRestrictedToken', 5);
        },
      },
    );
    expect(await probeWindowsToken(denied.value, 'L')).toMatchObject({
      available: false,
      reason:
        'a restricted token could not be created: CreateRestrictedToken failed with Win32 error 5 (ERROR_ACCESS_DENIED)',
    });
    expect(denied.calls).toEqual(['OpenProcessToken', 'CloseHandle base']);
  });
});
