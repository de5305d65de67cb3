// The test and benchmark server: `node e2e/dist/exec-server-bin.js --listen stdio`. It composes
// `runExecServer` of @ux/exec-server with the bwrap backend as its sandbox registry, which is why it
// lives here and not in either package. Not `ux exec-server`'s command line (which lives in the CLI):
// it takes a fixed set of flags, each one a setting, and checks nothing `runExecServer` does not check
// itself.
//
//   --listen stdio | ws://HOST:PORT    --ws-token-file PATH    --on-disconnect keep|terminate
//   --sandbox-backends a,b (empty: none)

import { type ExecServerListen, type ExecServerSettings, runExecServer } from '@ux/exec-server';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';

const io = {
  stdout: (text: string) => process.stdout.write(text),
  stderr: (text: string) => process.stderr.write(text),
  env: process.env,
  platform: process.platform,
};

function listenOn(value: string): ExecServerListen {
  if (value === 'stdio') return { kind: 'stdio' };
  const url = new URL(value);
  return { kind: 'websocket', host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) };
}

function settingsFrom(args: readonly string[]): ExecServerSettings {
  const settings: ExecServerSettings = { listen: { kind: 'stdio' } };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i]!, args[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--listen') settings.listen = listenOn(value);
    else if (flag === '--ws-token-file') settings.tokenFile = value;
    else if (flag === '--on-disconnect') settings.onDisconnect = value as 'keep' | 'terminate';
    else if (flag === '--sandbox-backends') settings.sandboxBackends = value.split(',').filter(Boolean);
    else throw new Error(`unknown flag ${JSON.stringify(flag)}`);
  }
  return settings;
}

try {
  process.exitCode = await runExecServer(settingsFrom(process.argv.slice(2)), io, {
    sandboxRegistry: (enabled) => {
      const all = { bwrap: createBwrapSandbox() };
      return createSandboxRegistry(
        Object.fromEntries(Object.entries(all).filter(([id]) => !enabled || enabled.includes(id))),
      );
    },
  });
} catch (error) {
  process.stderr.write(`exec-server: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
