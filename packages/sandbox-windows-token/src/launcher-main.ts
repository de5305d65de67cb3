import { randomRunSid } from './capability-sid.js';
import { loadKoffiWin32Api } from './koffi-win32-api.js';
import { parseLauncherArguments } from './launch-spec.js';
import {
  LAUNCHER_FAILURE_EXIT_CODE,
  type LauncherHost,
  runWindowsTokenLauncher,
} from './run-windows-token-launcher.js';
import type { Win32Api } from './win32-api.js';

/** The launcher's own process as a `LauncherHost`: its environment and cwd become the command's. */
export function nodeLauncherHost(): LauncherHost {
  return {
    env: Object.fromEntries(
      Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    cwd: process.cwd(),
    newRunSid: randomRunSid,
    writeError: (text) => process.stderr.write(text),
    onTerminate(handler) {
      const ignore = () => {};
      const signals = ['SIGBREAK', 'SIGHUP', 'SIGTERM'] as const;
      process.on('SIGINT', ignore);
      for (const signal of signals) process.on(signal, handler);
      return () => {
        process.off('SIGINT', ignore);
        for (const signal of signals) process.off(signal, handler);
      };
    },
  };
}

/**
 * What `node windows-token-launcher.js --plan <spec> -- <argv…>` does: read the plan, bind the Win32 API,
 * run the command under it, and return the command's exit code (125 for the launcher's own failures).
 */
export async function launcherMain(
  args: readonly string[],
  options: { loadApi?: () => Promise<Win32Api>; host?: LauncherHost } = {},
): Promise<number> {
  const host = options.host ?? nodeLauncherHost();
  try {
    const { spec, argv } = parseLauncherArguments(args);
    const api = await (options.loadApi ?? loadKoffiWin32Api)();
    return await runWindowsTokenLauncher(spec, argv, api, host);
  } catch (error) {
    host.writeError(`ux-windows-token: ${error instanceof Error ? error.message : String(error)}\n`);
    return LAUNCHER_FAILURE_EXIT_CODE;
  }
}
