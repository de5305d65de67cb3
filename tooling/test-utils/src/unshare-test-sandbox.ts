import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import {
  InvalidArgumentsError,
  isAbsolutePath,
  type LaunchPlan,
  MissingCommandLineError,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxCapability,
  type SandboxPlanRequest,
  type SandboxProbe,
} from '@ux/protocol';
import { resolveEntries } from '@ux/protocol-utils';

/** Mounts the remount loop leaves alone: device nodes and kernel views must keep working. */
const KEEP_WRITABLE = ['/dev', '/proc', '/sys'];

/**
 * A test double that really restricts: it runs the command in new mount (and, when the network is
 * restricted, network) namespaces with every mount read-only except the writable roots, and deny-read
 * paths covered. It needs root and util-linux `unshare`. It is not a security boundary (no seccomp, no
 * user namespace, nothing stops a root child from remounting); it exists so suites can prove that
 * sandbox checks pass and fail on real behaviour, before and beside the real backends.
 */
export function createUnshareTestSandbox(
  options: {
    /**
     * What its probe declares. Default what it holds against a command that is not root inside, as the
     * conformance suite checks it: writes limited to the writable roots, and read-deny (the policy's
     * deny-read paths and `hostState.hidden` are masked). Not protected names, not network_off (no
     * seccomp: a host unix socket stays reachable), not a proxy. A suite about something else (denial
     * evidence, approvals) may declare more, saying why.
     */
    enforces?: readonly SandboxCapability[];
  } = {},
): SandboxBackend {
  const enforces = options.enforces ?? ['write_limits', 'read_deny'];
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'unshare-test',
    platforms: ['linux'],
    async probe(): Promise<SandboxProbe> {
      if (process.platform !== 'linux') return { available: false, reason: 'not Linux', fix: 'run on Linux' };
      if (process.getuid?.() !== 0) {
        return {
          available: false,
          reason: 'the unshare test sandbox needs root',
          fix: 'run the tests as root',
        };
      }
      try {
        execFileSync('unshare', ['--mount', '--net', '--fork', 'true'], { stdio: 'ignore' });
        return { available: true, enforces };
      } catch (error) {
        return {
          available: false,
          reason: `unshare --mount --net failed: ${(error as Error).message}`,
          fix: 'install util-linux and allow mount and network namespaces',
        };
      }
    },
    async plan(request: SandboxPlanRequest): Promise<LaunchPlan> {
      if (request.argv.length === 0) throw new MissingCommandLineError();
      if (!isAbsolutePath(request.cwd)) {
        throw new InvalidArgumentsError({
          tool: 'sandbox plan',
          issues: [{ path: 'cwd', message: 'must be absolute' }],
        });
      }
      const writable: string[] = [];
      const hidden: { path: string; directory: boolean }[] = [];
      for (const entry of resolveEntries(request.policy.fileSystem, {
        cwd: request.cwd,
        projectRoots: request.projectRoots,
        tmpdir: request.env.TMPDIR,
      })) {
        if (entry.target.kind === 'glob') {
          throw new InvalidArgumentsError({
            tool: 'sandbox plan',
            issues: [
              { path: 'policy', message: 'glob entries are not supported by the unshare test sandbox' },
            ],
          });
        }
        if (entry.access === 'write' && entry.target.path !== '/') writable.push(entry.target.path);
        if (entry.access === 'none')
          hidden.push({ path: entry.target.path, directory: isDirectory(entry.target.path) });
      }
      for (const path of request.policy.hostState?.hidden ?? [])
        hidden.push({ path, directory: isDirectory(path) });
      const restrictedFs = request.policy.fileSystem.kind === 'restricted';
      const lines = ['set -e'];
      if (restrictedFs) {
        for (const root of writable)
          lines.push(`[ -e ${quote(root)} ] && mount --bind ${quote(root)} ${quote(root)}`);
        const skip = [...writable, ...KEEP_WRITABLE].map((p) => `${p}|${p}/*`).join('|');
        lines.push(
          `for m in $(cut -d' ' -f5 /proc/self/mountinfo); do case "$m" in ${skip}) ;; *) mount -o remount,bind,ro "$m" ;; esac; done`,
        );
        for (const { path, directory } of hidden) {
          lines.push(
            directory
              ? `mount -t tmpfs -o ro,size=4k ux-hidden ${quote(path)}`
              : `[ -e ${quote(path)} ] && mount --bind /dev/null ${quote(path)}`,
          );
        }
      }
      // Re-enter the cwd so it resolves through the new mounts, not the directory opened before them.
      lines.push(`cd ${quote(request.cwd)}`, 'exec "$@"');
      const unshare = ['unshare', '--mount', '--fork', '--kill-child'];
      if (request.policy.network === 'restricted') unshare.push('--net');
      return {
        argv: [...unshare, '--', '/bin/sh', '-c', lines.join('\n'), 'ux-unshare-test', ...request.argv],
        cwd: request.cwd,
        env: { ...request.env },
        sandboxType: 'unshare-test',
        enforcement: {
          fileSystem: restrictedFs ? 'advisory' : 'none',
          network: request.policy.network === 'restricted' ? 'advisory' : 'enforced',
          notes: ['test double: a root child can undo the mounts; use a real backend for isolation'],
        },
      };
    },
    classifyDenial(evidence) {
      if (evidence.exitCode === 0) return 'not_denied';
      return /read-only file system|permission denied|network is unreachable/i.test(evidence.output)
        ? 'denied'
        : 'unknown';
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
