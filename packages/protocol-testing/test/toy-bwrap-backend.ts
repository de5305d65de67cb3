// A toy sandbox backend for the conformance suite's own tests (Linux, needs `bwrap` on PATH): bubblewrap
// with a read-only root, the writable roots bound writable, deny-read and hidden paths masked, a private
// /tmp, a pid namespace and, when the network is off, a network namespace. No protected paths, no path
// guard, no seccomp filter. It declares whatever it is told to. Not exported from the package.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxCapability } from '@ux/protocol/core';
import {
  MissingCommandLineError,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  UxError,
} from '@ux/protocol/core';

/** What the toy really holds; anything beyond this is a lie the suite must catch. */
export const TOY_BWRAP_ENFORCES: readonly SandboxCapability[] = [
  'write_limits',
  'read_deny',
  'private_tmp',
  'process_isolation',
];

/** Parts the toy can leave out, to show that each capability's checks catch the gap. */
export type ToyBwrapPart = 'read-only root' | 'masks' | 'private tmp' | 'pid namespace' | 'network namespace';

export function toyBwrapBackend(
  enforces: readonly SandboxCapability[],
  without: readonly ToyBwrapPart[] = [],
): SandboxBackend & { close(): Promise<void> } {
  let privateTmp: string | undefined;
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'toy-bwrap',
    platforms: ['linux'],
    async probe() {
      const found = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']);
      return found.status === 0
        ? { available: true, enforces }
        : { available: false, reason: 'bwrap cannot start here', fix: 'apt-get install bubblewrap' };
    },
    async plan(request) {
      if (request.argv.length === 0) throw new MissingCommandLineError();
      if (!request.cwd.startsWith('/')) throw new UxError('invalid_arguments', 'cwd must be absolute');
      const { policy } = request;
      const has = (part: ToyBwrapPart) => !without.includes(part);
      const args = [
        has('read-only root') ? '--ro-bind' : '--bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
      ];
      if (has('pid namespace')) args.push('--unshare-pid');
      const env = { ...request.env };
      if (policy.privateTmp && has('private tmp')) {
        privateTmp ??= mkdtempSync(join(tmpdir(), 'toy-bwrap-tmp-'));
        args.push('--bind', privateTmp, '/tmp');
        env.TMPDIR = '/tmp';
      }
      const masks: string[] = [...(policy.hostState?.hidden ?? [])];
      if (policy.fileSystem.kind === 'restricted') {
        for (const entry of policy.fileSystem.entries) {
          const { path: where, access } = entry;
          const path =
            where.type === 'path'
              ? where.path
              : where.type === 'special' && where.value === 'cwd'
                ? request.cwd
                : undefined;
          if (path !== undefined && access === 'write') args.push('--bind', path, path);
          if (path !== undefined && access === 'none') masks.push(path);
        }
      } else args.push('--bind', '/', '/');
      for (const path of has('masks') ? masks : []) {
        const isDir = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? true;
        args.push(...(isDir ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path]));
      }
      if (policy.network !== 'enabled' && has('network namespace')) args.push('--unshare-net');
      args.push('--die-with-parent', '--chdir', request.cwd, '--');
      // bwrap waits for the command: it ignores the signals the command gets (so it survives Ctrl-C and
      // exits with the command's code); `env --default-signal` gives the command the default handlers back.
      const wrapper = ['/bin/sh', '-c', 'trap "" INT QUIT TERM HUP; exec "$@"', 'toy-bwrap', 'bwrap'];
      const restore = ['env', '--default-signal=INT,QUIT,TERM,HUP'];
      return {
        argv: [...wrapper, ...args, ...restore, ...request.argv],
        cwd: request.cwd,
        env,
        sandboxType: 'toy-bwrap',
        enforcement: {
          fileSystem: 'enforced',
          network: policy.network === 'enabled' ? 'none' : 'enforced',
          notes: [],
        },
      };
    },
    async close() {
      if (privateTmp) rmSync(privateTmp, { recursive: true, force: true });
      privateTmp = undefined;
    },
  };
}
