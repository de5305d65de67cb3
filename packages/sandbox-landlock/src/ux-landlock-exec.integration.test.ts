// The launcher's command line, run for real: the ABI query, every exit-125 case (nothing runs), the
// command's own exit status, 126/127, kept and closed descriptors, signals given back.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSeccompProgram, hostSeccompArch } from '@ux/sandbox-bwrap/linux';
import { useLeakCheck } from '@ux/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { checkedLauncher } from './create-landlock-sandbox.js';

const launcher = checkedLauncher();
const arch = hostSeccompArch();
if (!arch) throw new Error(`no seccomp filter for ${process.arch}`);
const HEX = Buffer.from(buildSeccompProgram(arch, 'restricted')).toString('hex');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-landlock-exec-')));
const SYSTEM = [
  '--ro',
  '/usr',
  '--ro',
  '/bin',
  '--ro',
  '/lib',
  '--ro',
  '/lib64',
  '--ro',
  '/etc',
  '--ro',
  '/proc',
];
const env = { PATH: '/usr/bin:/bin' };
useLeakCheck();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], options: { stdio?: ('pipe' | 'ignore' | number)[] } = {}) => {
  const result = spawnSync(launcher, args, { env, cwd: dir, encoding: 'utf8', timeout: 10_000, ...options });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
};
const launch = (command: string[], extra: string[] = []) =>
  run([...SYSTEM, ...extra, '--seccomp-program', HEX, '--', ...command]);

describe('ux-landlock-exec', () => {
  it('--abi prints the kernel Landlock ABI', () => {
    const result = run(['--abi']);
    expect(result.status).toBe(0);
    expect(Number(result.stdout.trim())).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ['no seccomp program', [...SYSTEM, '--', '/bin/true'], /--seccomp-program is required/],
    [
      'an unknown option',
      ['--frobnicate', 'x', '--seccomp-program', HEX, '--', '/bin/true'],
      /unknown option --frobnicate/,
    ],
    [
      'a relative path',
      ['--ro', 'usr', '--seccomp-program', HEX, '--', '/bin/true'],
      /needs an absolute path/,
    ],
    ['an odd hex program', ['--seccomp-program', 'abc', '--', '/bin/true'], /even number of hex digits/],
    [
      'a program that is not one',
      ['--seccomp-program', 'abcd', '--', '/bin/true'],
      /is not a seccomp program/,
    ],
    [
      'a program with a non-hex digit',
      ['--seccomp-program', 'zz'.repeat(8), '--', '/bin/true'],
      /not a hex digit/,
    ],
    ['no command', ['--seccomp-program', HEX, '--'], /no command after --/],
    [
      'a kept descriptor below 3',
      ['--keep-fd', '2', '--seccomp-program', HEX, '--', '/bin/true'],
      /--keep-fd needs/,
    ],
    [
      'an ABI the kernel does not have',
      ['--min-abi', '999', '--seccomp-program', HEX, '--', '/bin/true'],
      /offers Landlock ABI \d+, and this sandbox needs 999/,
    ],
  ])('fails with 125 and nothing run on %s', (_, args, message) => {
    const result = run([...args.slice(0, -1), ...(args.at(-1) === '--' ? ['--'] : [args.at(-1)!])]);
    expect(result.status).toBe(125);
    expect(result.stderr).toMatch(/^ux: sandbox setup failed: /);
    expect(result.stderr).toMatch(message);
  });

  it("exits with the command's own status; 127 when it is missing, 126 when it cannot run", () => {
    expect(launch(['/bin/sh', '-c', 'exit 42']).status).toBe(42);
    expect(launch(['no-such-command-ux']).status).toBe(127);
    // Readable but not executable: a directory.
    expect(launch(['/usr']).status).toBe(126);
  });

  it('grants nothing for a path that does not exist, and nothing outside the rules', () => {
    const result = launch(
      ['/bin/sh', '-c', `echo x > ${dir}/f && echo WROTE; ls ${dir} && echo LISTED`],
      ['--ro', join(dir, 'missing')],
    );
    expect(result.stdout).not.toContain('WROTE');
    expect(result.stdout).not.toContain('LISTED');
    const granted = launch(['/bin/sh', '-c', `echo x > ${dir}/f && echo WROTE`], ['--rw', dir]);
    expect(granted.stdout).toContain('WROTE');
  });

  it('keeps only the descriptors it is told to keep', () => {
    const fd = openSync(join(dir, 'kept'), 'a');
    try {
      const stdio: ('pipe' | 'ignore' | number)[] = ['ignore', 'pipe', 'pipe'];
      for (let i = 3; i <= 12; i++) stdio[i] = 'ignore';
      stdio[5] = fd;
      stdio[12] = fd;
      const result = run(
        [...SYSTEM, '--keep-fd', '12', '--seccomp-program', HEX, '--', '/bin/sh', '-c', 'ls /proc/self/fd'],
        { stdio },
      );
      const fds = result.stdout.trim().split('\n').map(Number);
      expect(fds).toContain(12);
      expect(fds).not.toContain(5);
      expect(fds.filter((n) => n > 2 && n !== 12).length).toBeLessThanOrEqual(1); // ls's own directory
    } finally {
      closeSync(fd);
    }
  });

  it('gives the command default signal dispositions and an empty mask', () => {
    const result = spawnSync(
      '/bin/sh',
      [
        '-c',
        `trap '' INT TERM HUP QUIT; exec "$0" "$@"`,
        launcher,
        ...SYSTEM,
        '--seccomp-program',
        HEX,
        '--',
        'grep',
        '-E',
        '^Sig(Ign|Blk)',
        '/proc/self/status',
      ],
      { env, encoding: 'utf8' },
    );
    expect(result.stdout + result.stderr).toMatch(/SigBlk:\s+0+\n/);
    // The launcher's caller ignored four; the command (grep, exec'd by the launcher) ignores none.
    expect(result.stdout).toMatch(/SigIgn:\s+0+\n/);
  });
});
