import { describe, expect, it } from 'vitest';
import { encodeLaunchSpec } from './launch-spec.js';
import { launcherMain } from './launcher-main.js';
import { LAUNCHER_FAILURE_EXIT_CODE, type LauncherHost } from './run-windows-token-launcher.js';
import type { Win32Api } from './win32-api.js';

const host = (errors: string[]): LauncherHost => ({
  env: {},
  cwd: 'C:\\w',
  newRunSid: () => 'S-1-15-3-1024-9-9-9-9-9-9-9-9',
  writeError: (text) => errors.push(text),
  onTerminate: () => () => {},
});

describe('launcherMain', () => {
  it('fails with 125 and a usage line on bad arguments, before binding Win32', async () => {
    const errors: string[] = [];
    let loaded = false;
    const code = await launcherMain(['cmd.exe'], {
      host: host(errors),
      loadApi: async () => {
        loaded = true;
        return {} as Win32Api;
      },
    });
    expect(code).toBe(LAUNCHER_FAILURE_EXIT_CODE);
    expect(errors).toEqual([
      expect.stringContaining('ux-windows-token: usage: windows-token-launcher --plan'),
    ]);
    expect(loaded).toBe(false);
  });

  it('reports that Win32 cannot be bound off Windows', async () => {
    const errors: string[] = [];
    const spec = encodeLaunchSpec({
      version: 1,
      sandboxId: 'default',
      capabilitySid: 'S-1-15-3-1024-1-2-3-4-5-6-7-8',
      token: { flags: 13, restrictingSids: ['S-1-1-0'] },
      aces: [],
      tty: false,
    });
    const code = await launcherMain(['--plan', spec, '--', 'cmd.exe'], {
      host: host(errors),
      ...(process.platform === 'win32'
        ? { loadApi: async () => Promise.reject(new Error('not on this platform')) }
        : {}),
    });
    expect(code).toBe(LAUNCHER_FAILURE_EXIT_CODE);
    expect(errors.join('')).toContain('not on this platform');
  });
});
