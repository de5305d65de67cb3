import { readdirSync } from 'node:fs';
import { type ConnectControlOptions, connectControl } from './connect-control.js';
import { controlDirectory, controlSocketPid } from './control-paths.js';
import type { ControlHello } from './start-control-server.js';
import { sweepStaleControlSockets } from './sweep-stale-control-sockets.js';

/**
 * Every live ux process of this user that serves a control socket, by `hello`, oldest first. Sockets
 * of processes that are gone are removed; a socket that does not answer is skipped.
 */
export async function listControlProcesses(options: ConnectControlOptions = {}): Promise<ControlHello[]> {
  const dir = controlDirectory(options.runtimeRoot);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  sweepStaleControlSockets(dir);
  const pids = names.map(controlSocketPid).filter((pid): pid is number => pid !== undefined);
  const hellos = await Promise.all(
    pids.map(async (pid) => {
      try {
        const client = await connectControl(pid, options);
        client.close();
        return client.hello;
      } catch {
        return undefined;
      }
    }),
  );
  return hellos
    .filter((hello): hello is ControlHello => hello !== undefined)
    .sort((a, b) => a.startedAt - b.startedAt);
}
