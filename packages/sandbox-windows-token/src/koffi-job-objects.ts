import type koffiModule from 'koffi';
import { loadKoffiWin32Api } from './koffi-win32-api.js';
import { Win32CallError } from './win32-api.js';
import { type Win32JobObjects, win32JobObjects } from './win32-job-objects.js';

/** The one function the job port needs beyond the launcher's (`WIN32_FUNCTIONS`). */
export const JOB_PORT_FUNCTIONS = {
  OpenProcess: ['kernel32.dll', 'void *__stdcall OpenProcess(uint32_t access, int inherit, uint32_t pid)'],
  GetLastError: ['kernel32.dll', 'uint32_t __stdcall GetLastError()'],
} as const;

/**
 * Kill-on-close job objects through koffi, for the Windows spawner of `@ux/spawn`:
 * `createLocalSpawner({ windows: { jobObjects: await loadKoffiJobObjects() } })`. Windows only; rejects
 * with `SandboxUnavailableError` elsewhere or when koffi cannot be loaded. Not run on a real Windows
 * machine (see the README).
 */
export async function loadKoffiJobObjects(
  platform: NodeJS.Platform = process.platform,
): Promise<Win32JobObjects> {
  const api = await loadKoffiWin32Api(platform);
  const koffi = (await import('koffi')).default as typeof koffiModule;
  const kernel32 = koffi.load('kernel32.dll');
  const openProcess = kernel32.func(JOB_PORT_FUNCTIONS.OpenProcess[1]);
  const getLastError = kernel32.func(JOB_PORT_FUNCTIONS.GetLastError[1]);
  return win32JobObjects({
    ...api,
    openProcess(pid, access) {
      const handle = openProcess(access, 0, pid) as bigint | null;
      if (!handle) throw new Win32CallError('OpenProcess', getLastError() as number, `pid ${pid}`);
      return handle;
    },
  });
}
