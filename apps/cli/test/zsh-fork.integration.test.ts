import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { tempDir, useLeakCheck, zshForkPath } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, runUx } from './cli-harness.js';

useLeakCheck();

/**
 * zsh 5.9's upstream tarball, as the source step left it: `$UX_ZSH_SOURCE` when that names one, else
 * the `zsh_*.orig.tar.xz` that `npm run zsh-source` downloaded into `$UX_ZSH_SOURCE_CACHE` or
 * ~/.cache/ux/zsh-src. Throws with the command that fetches it.
 */
function zshSourceTarball(): string {
  const given = process.env.UX_ZSH_SOURCE;
  if (given && /\.tar\.\w+$/.test(given) && existsSync(given)) return given;
  const dir =
    process.env.UX_ZSH_SOURCE_CACHE || join(process.env.HOME || homedir(), '.cache', 'ux', 'zsh-src');
  const orig = existsSync(dir)
    ? readdirSync(dir).find((name) => /^zsh_5\.9\.orig\.tar\.xz$/.test(name))
    : undefined;
  if (!orig)
    throw new Error(
      `no zsh 5.9 source tarball in ${dir}; fetch it with: npm run zsh-source (or set UX_ZSH_SOURCE to zsh-5.9.tar.xz)`,
    );
  return join(dir, orig);
}

describe('ux zsh-fork', () => {
  it('status on a missing fork says where it looked and how to build it, and exits 1', async () => {
    const home = makeHome();
    const status = await runUx(['zsh-fork', 'status'], home);
    expect(status.stdout).toContain(
      `patched zsh: ${home.home}/zsh-fork/bin/zsh (default location, $UX_HOME/zsh-fork)`,
    );
    expect(status.stdout).toContain('status: missing');
    expect(status.stdout).toMatch(/^to build it: ux zsh-fork build/m);
    expect(status.status).toBe(1);
    const json = JSON.parse((await runUx(['zsh-fork', 'status', '--json'], home)).stdout);
    expect(json).toMatchObject({
      exists: false,
      usable: false,
      origin: 'default',
      build: expect.stringMatching(/^ux zsh-fork build/),
    });
  });

  it('status follows zsh_fork.zsh_path and says when it is not the patched zsh', async () => {
    const home = makeHome({ config: '[zsh_fork]\nzsh_path = "/bin/sh"\n' });
    const status = await runUx(['zsh-fork', 'status'], home);
    expect(status.stdout).toContain('patched zsh: /bin/sh (zsh_fork.zsh_path in config.toml)');
    expect(status.stdout).toContain('status: not usable: /bin/sh does not run as zsh');
    expect(status.status).toBe(1);
  });

  it('status on the cached fork says it is usable', async () => {
    const zsh = zshForkPath();
    const home = makeHome({ config: `[zsh_fork]\nzsh_path = ${JSON.stringify(zsh)}\n` });
    const status = await runUx(['zsh-fork', 'status'], home);
    expect(status.stdout).toContain('status: usable (zsh 5.9; the exec-wrapper smoke test passed)');
    expect(status.stdout).toMatch(/^patch: current \(sha256 [0-9a-f]{12}\)$/m);
    expect(status.status).toBe(0);
  });

  it('status and doctor find the fork npm test built in ~/.cache/ux/zsh-fork, verify it, and say how to use it', async () => {
    const zsh = zshForkPath();
    const cacheDir = dirname(dirname(zsh));
    const home = makeHome();
    // The person's HOME holds the tests' cache, as after `npm test`.
    const cacheParent = join(home.home, '.cache', 'ux', 'zsh-fork');
    mkdirSync(cacheParent, { recursive: true });
    symlinkSync(cacheDir, join(cacheParent, basename(cacheDir)));
    const found = join(cacheParent, basename(cacheDir), 'bin', 'zsh');

    const status = await runUx(['zsh-fork', 'status'], home);
    expect(status.stdout).toContain('status: missing\n');
    expect(status.stdout).toContain(
      `found: ${found}, built by npm test: usable (zsh 5.9; the exec-wrapper smoke test passed; patch current)\n`,
    );
    expect(status.stdout).toContain(`  zsh_path = ${JSON.stringify(found)}\n`);
    expect(status.status).toBe(1);
    const json = JSON.parse((await runUx(['zsh-fork', 'status', '--json'], home)).stdout);
    expect(json.found).toEqual({ path: found, usable: true, version: '5.9', origin: 'test-cache' });

    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^skip +zsh fork +not in use; npm test built a usable one at ${found.replace(/[.]/g, '\\.')} `,
        'm',
      ),
    );

    // Doing what it says makes the fork the one in use.
    const lines = status.stdout.split('\n');
    const start = lines.indexOf('  [zsh_fork]');
    const config = lines
      .slice(start, start + 5)
      .map((line) => line.trim())
      .join('\n');
    writeFileSync(join(home.home, 'config.toml'), `${config}\n`);
    const after = await runUx(['zsh-fork', 'status'], home);
    expect(after.stdout).toContain(`patched zsh: ${found} (zsh_fork.zsh_path in config.toml)`);
    expect(after.stdout).toContain('status: usable');
    expect(after.status).toBe(0);
    const inUse = await runUx(['doctor'], home);
    expect(inUse.stdout).toMatch(/^ok +zsh fork +in use: /m);
  });

  it('a file in the test cache that is not the patched zsh is reported as not usable, never offered', async () => {
    const home = makeHome();
    const dir = join(home.home, '.cache', 'ux', 'zsh-fork', basename(dirname(dirname(zshForkPath()))), 'bin');
    mkdirSync(dir, { recursive: true });
    copyFileSync('/bin/sh', join(dir, 'zsh'));
    chmodSync(join(dir, 'zsh'), 0o755);
    const status = await runUx(['zsh-fork', 'status'], home);
    expect(status.stdout).toMatch(/^found: .*, built by npm test, but it is not usable: /m);
    expect(status.stdout).not.toContain('zsh_path =');
    expect(status.stdout).toMatch(/^to build it: ux zsh-fork build/m);
    expect(status.status).toBe(1);
  });

  it('build --source with a path that does not exist fails with what to pass, exit 1, nothing installed', async () => {
    const home = makeHome();
    const build = await runUx(['zsh-fork', 'build', '--source', '/nonexistent'], home);
    expect(build.stderr).toContain('ux: the zsh source /nonexistent does not exist');
    expect(build.stderr).toContain('ux zsh-fork build --source /path/to/zsh-5.9.tar.xz');
    expect(build.status).toBe(1);
    expect(build.stdout).toBe('');
    expect(existsSync(join(home.home, 'zsh-fork', 'bin', 'zsh'))).toBe(false);
  });

  it('usage errors: unknown subcommand with a suggestion, stray argument, empty --source', async () => {
    const home = makeHome();
    const unknown = await runUx(['zsh-fork', 'biuld'], home);
    expect(unknown.stderr).toBe(
      `ux: unknown zsh-fork command "biuld" (did you mean "build"?); expected build or status\nRun 'ux zsh-fork --help' for usage.\n`,
    );
    expect(unknown.status).toBe(2);
    const stray = await runUx(['zsh-fork', 'status', 'now'], home);
    expect(stray.stderr).toBe(`ux: unexpected argument "now"\nRun 'ux zsh-fork --help' for usage.\n`);
    expect(stray.status).toBe(2);
    const option = await runUx(['zsh-fork', 'build', '--sorce', 'x'], home);
    expect(option.stderr).toContain('--sorce');
    expect(option.stderr).toContain("Run 'ux zsh-fork --help' for usage.");
    expect(option.status).toBe(2);
    const help = await runUx(['help', 'zsh-fork'], home);
    expect(help.stdout).toContain('Usage: ux zsh-fork <build|status> [options]');
    expect((await runUx(['--help'], home)).stdout).toContain('zsh-fork build|status');
  });

  it('build --source <zsh 5.9 tarball> --out DIR builds, smoke-tests and installs the patched zsh', async () => {
    const source = zshSourceTarball();
    const home = makeHome();
    const out = join(tempDir('ux-zsh-fork-out-'), 'fork');
    const build = await runUx(['zsh-fork', 'build', '--source', source, '--out', out], home);
    expect(build.stderr).toContain('ux zsh-fork: applying the exec-wrapper patch\n');
    expect(build.stderr).toContain('ux zsh-fork: running the smoke test\n');
    // Progress lines only: the compiler's output stays out unless the build fails or --verbose.
    expect(build.stderr).not.toContain('gcc');
    expect(build.stdout.split('\n')[0]).toBe(join(out, 'bin', 'zsh'));
    expect(build.stdout).toContain('smoke test: passed (zsh 5.9');
    expect(build.status).toBe(0);
    const info = JSON.parse(readFileSync(join(out, 'BUILD_INFO.json'), 'utf8'));
    expect(info).toMatchObject({ zshVersion: '5.9', source });
    expect(info.patchSha256).toMatch(/^[0-9a-f]{64}$/);
    // No temp file left beside the installed binary.
    expect(readdirSync(join(out, 'bin'))).toEqual(['zsh']);
    const configured = makeHome({
      config: `[zsh_fork]\nzsh_path = ${JSON.stringify(join(out, 'bin', 'zsh'))}\n`,
    });
    const status = JSON.parse((await runUx(['zsh-fork', 'status', '--json'], configured)).stdout);
    expect(status).toMatchObject({ usable: true, version: '5.9', patchCurrent: true, origin: 'configured' });
  }, 900_000);
});
