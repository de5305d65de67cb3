// A test and benchmark entry point: `node dist/testing/exec-server-bin.js --listen stdio`. It runs the
// same parser and `runExecServer` as `ux exec-server`, with the bwrap backend (a devDependency) as its
// sandbox registry. Not published (package.json `files` excludes dist/testing).
import { createSandboxRegistry } from '@ux/protocol';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { parseExecServerArgs } from '../exec-server-args.js';
import { runExecServer } from '../run-exec-server.js';

const io = {
  stdout: (text: string) => process.stdout.write(text),
  stderr: (text: string) => process.stderr.write(text),
  env: process.env,
  platform: process.platform,
};

try {
  const args = parseExecServerArgs(process.argv.slice(2));
  process.exitCode = await runExecServer(args, io, {
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
