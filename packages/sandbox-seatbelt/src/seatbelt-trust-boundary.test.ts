import { existsSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  type EffectivePolicy,
  type FileSystemEntry,
  InvalidArgumentsError,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol';
import { uxRuntimeRoot } from '@ux/protocol-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { evaluateSbpl, macFs } from '../test/test-support.js';
import { checkSeatbeltProfile } from './check-seatbelt-profile.js';
import { withPrivatePrefix } from './macos-path.js';
import { planSeatbelt, type SeatbeltPlan } from './seatbelt-plan.js';
import { createSeatbeltSandbox } from './seatbelt-sandbox.js';

/*
 * The trust-boundary fields of the policy (ux's hidden directories, a private /tmp, the paths the
 * launch reads), read back from the generated profile with the SBPL evaluator (no Mac here).
 */

const FILES = {
  '/tmp': '-> private/tmp',
  '/var': '-> private/var',
  '/private/tmp/ux-501/seatbelt-tmp-1-00000000/': '',
  '/private/tmp/ux-501/net-2-11111111/proxy.sock': '',
  '/private/tmp/ux-501/snap-1-22222222/zsh.sh': '',
  '/private/tmp/other/': '',
  '/private/var/folders/zz/x/T/': '',
  '/Users/me/w/.git/config': '',
  '/Users/me/w/tools/helper': '',
  '/Users/me/w/src/': '',
  '/Users/me/.ux/bin/': '',
  '/Users/me/.ux/quarantine/1/': '',
  '/bin/zsh': '',
};
const fs = macFs(FILES);
const PRIVATE = '/tmp/ux-501/seatbelt-tmp-1-00000000';
const entry = (
  value: 'root' | 'cwd' | 'slash_tmp' | 'tmpdir' | 'minimal',
  access: FileSystemEntry['access'],
) => ({ path: { type: 'special', value }, access }) as FileSystemEntry;
const workspaceWrite = (more: Omit<EffectivePolicy, 'fileSystem' | 'network'> = {}): EffectivePolicy => ({
  fileSystem: {
    kind: 'restricted',
    entries: [
      entry('root', 'read'),
      entry('cwd', 'write'),
      entry('slash_tmp', 'write'),
      entry('tmpdir', 'write'),
    ],
  },
  network: 'restricted',
  ...more,
});
const request = (overrides: Partial<SandboxPlanRequest> = {}): SandboxPlanRequest => ({
  argv: ['/bin/zsh', '-c', 'true'],
  cwd: '/Users/me/w',
  env: { PATH: '/usr/bin:/bin', HOME: '/Users/me', TMPDIR: '/var/folders/zz/x/T/' },
  policy: workspaceWrite(),
  tty: false,
  ...overrides,
});
const plan = (overrides: Partial<SandboxPlanRequest> = {}, privateTmpDir?: string | (() => string)) => {
  const planned = planSeatbelt(request(overrides), {
    fs,
    hostEnv: {},
    ...(privateTmpDir === undefined ? {} : { privateTmpDir }),
  });
  expect(checkSeatbeltProfile(planned.profile, planned.parameters)).toEqual([]);
  return planned;
};
const may = (planned: SeatbeltPlan, operation: string, path: string) =>
  evaluateSbpl(planned.profile, planned.parameters, { operation, path });

describe("ux's hidden directories", () => {
  const planned = plan({
    policy: workspaceWrite({ hostState: { hidden: ['/tmp/ux-501', '/Users/me/.ux/quarantine', '/run/x'] } }),
  });

  it('cannot be read or written, though /tmp is a writable root and reads are everywhere', () => {
    for (const path of [
      '/private/tmp/ux-501',
      '/private/tmp/ux-501/net-2-11111111/proxy.sock',
      '/private/tmp/ux-501/new-file',
      '/Users/me/.ux/quarantine/1/x',
    ]) {
      for (const operation of [
        'file-read-data',
        'file-read-metadata',
        'file-write-data',
        'file-write-create',
      ])
        expect(may(planned, operation, path), `${operation} ${path}`).toBe('deny');
    }
    // Control: the rest of /tmp stays writable and readable.
    expect(may(planned, 'file-write-create', '/private/tmp/other/x')).toBe('allow');
    expect(may(planned, 'file-read-data', '/private/tmp/other/x')).toBe('allow');
  });

  it('cannot be written in another letter case inside a writable root, nor moved out of the way', () => {
    expect(may(planned, 'file-write-create', '/private/tmp/UX-501/net-2-11111111/proxy.sock')).toBe('deny');
    expect(may(planned, 'file-write-unlink', '/private/tmp/ux-501')).toBe('deny');
  });

  it('are named in the notes; a missing one is left out', () => {
    expect(planned.enforcement.notes).toContain(
      "ux's own directories are neither readable nor writable: /private/tmp/ux-501, /Users/me/.ux/quarantine",
    );
    expect(planned.parameters.map(([, value]) => value)).not.toContain('/run/x');
  });
});

describe('a private /tmp', () => {
  const policy = workspaceWrite({ privateTmp: true, hostState: { hidden: ['/tmp/ux-501'] } });
  const planned = plan({ policy }, PRIVATE);

  it("replaces /tmp and $TMPDIR: the backend's directory is writable, they are not", () => {
    expect(planned.env.TMPDIR).toBe('/private/tmp/ux-501/seatbelt-tmp-1-00000000');
    for (const operation of ['file-write-create', 'file-write-data', 'file-read-data'])
      expect(may(planned, operation, '/private/tmp/ux-501/seatbelt-tmp-1-00000000/a/b')).toBe('allow');
    for (const path of ['/private/tmp/x', '/private/tmp/other/x', '/private/var/folders/zz/x/T/x'])
      expect(may(planned, 'file-write-create', path), path).toBe('deny');
    // The rest of the runtime directory stays hidden; its own metadata is readable for realpath().
    expect(may(planned, 'file-read-data', '/private/tmp/ux-501/net-2-11111111/proxy.sock')).toBe('deny');
    expect(may(planned, 'file-read-metadata', '/private/tmp/ux-501')).toBe('allow');
    expect(may(planned, 'file-read-metadata', '/private/tmp/ux-501/net-2-11111111')).toBe('deny');
  });

  it('keeps the workspace writable though it lies in /tmp', () => {
    const inTmp = planSeatbelt(request({ cwd: '/tmp/other', policy }), {
      fs,
      hostEnv: {},
      privateTmpDir: PRIVATE,
    });
    expect(may(inTmp, 'file-write-create', '/private/tmp/other/x')).toBe('allow');
    expect(may(inTmp, 'file-write-create', '/private/tmp/x')).toBe('deny');
  });

  it('asks for the directory only when the policy has a private /tmp', () => {
    let asked = 0;
    const make = () => {
      asked++;
      return PRIVATE;
    };
    const without = plan({}, make);
    expect(asked).toBe(0);
    expect(without.env.TMPDIR).toBe('/var/folders/zz/x/T/');
    expect(may(without, 'file-write-create', '/private/tmp/x')).toBe('allow');
    plan({ policy }, make);
    expect(asked).toBe(1);
  });

  it('is refused without a directory, with one inside a writable root, and with a relative one', () => {
    const error = (privateTmpDir?: string) => {
      try {
        plan({ policy }, privateTmpDir);
      } catch (caught) {
        return caught;
      }
      throw new Error('expected a refusal');
    };
    expect(error()).toBeInstanceOf(SandboxUnavailableError);
    const inside = error('/Users/me/w/.tmp') as SandboxUnavailableError;
    expect(inside).toBeInstanceOf(SandboxUnavailableError);
    expect(inside.reason).toContain('lies inside the writable root /Users/me/w');
    expect(error('relative/tmp')).toBeInstanceOf(InvalidArgumentsError);
  });
});

describe('what the launch reads (hostPaths)', () => {
  const restrictedReads: EffectivePolicy = {
    fileSystem: { kind: 'restricted', entries: [entry('minimal', 'read'), entry('cwd', 'write')] },
    network: 'restricted',
    hostState: { hidden: ['/tmp/ux-501'] },
  };
  const planned = plan({
    policy: restrictedReads,
    hostPaths: [
      '/bin/zsh',
      '/Users/me/.ux/bin',
      '/tmp/ux-501/snap-1-22222222/zsh.sh',
      '/Users/me/w/tools/helper',
    ],
  });

  it('stays readable under restricted reads and inside a hidden directory', () => {
    for (const path of [
      '/bin/zsh',
      '/Users/me/.ux/bin/apply_patch',
      '/private/tmp/ux-501/snap-1-22222222/zsh.sh',
      '/Users/me/w/tools/helper',
    ])
      expect(may(planned, 'file-read-data', path), path).toBe('allow');
    // Control: the same places without the host paths.
    const control = plan({ policy: restrictedReads });
    expect(may(control, 'file-read-data', '/Users/me/.ux/bin/apply_patch')).toBe('deny');
    expect(may(control, 'file-read-data', '/private/tmp/ux-501/snap-1-22222222/zsh.sh')).toBe('deny');
    // Only what was listed: the snapshot's neighbours stay hidden.
    expect(may(planned, 'file-read-data', '/private/tmp/ux-501/net-2-11111111/proxy.sock')).toBe('deny');
  });

  it('is never writable: one inside the workspace becomes a carve-out, in every letter case', () => {
    expect(may(planned, 'file-write-data', '/Users/me/w/tools/helper')).toBe('deny');
    expect(may(planned, 'file-write-data', '/Users/me/w/TOOLS/Helper')).toBe('deny');
    expect(may(planned, 'file-write-unlink', '/Users/me/w/tools')).toBe('deny');
    expect(may(planned, 'file-write-create', '/Users/me/w/tools/other')).toBe('allow');
    expect(may(planned, 'file-write-data', '/private/tmp/ux-501/snap-1-22222222/zsh.sh')).toBe('deny');
  });

  it('says so when a host path holds a writable root, which stays writable', () => {
    const holding = plan({ hostPaths: ['/Users/me'] });
    expect(holding.enforcement.notes).toContain(
      '/Users/me, which the launch reads, is or holds a writable root, so it stays writable',
    );
    expect(may(holding, 'file-write-create', '/Users/me/w/src/x')).toBe('allow');
  });
});

describe('createSeatbeltSandbox: its private /tmp', () => {
  const workspace = () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-seatbelt-tmp-')));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('is made 0700 at the first plan that needs it, shared by later plans, and removed by close()', async () => {
    const dir = workspace();
    const privateTmp = join(dir, 'private-tmp');
    const backend = createSeatbeltSandbox({ hostEnv: {}, privateTmpDir: privateTmp });
    const base = {
      argv: ['/bin/sh', '-c', 'true'],
      cwd: join(dir),
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
    };
    const policy = {
      fileSystem: {
        kind: 'restricted' as const,
        entries: [entry('root', 'read'), entry('slash_tmp', 'write')],
      },
      network: 'restricted' as const,
    };

    await backend.plan({ ...base, policy });
    expect(existsSync(privateTmp)).toBe(false);

    const first = await backend.plan({ ...base, policy: { ...policy, privateTmp: true } });
    expect(statSync(privateTmp).mode & 0o777).toBe(0o700);
    // Spelled as Seatbelt sees it (/tmp is /private/tmp on a Mac).
    expect(first.env.TMPDIR).toBe(withPrivatePrefix(privateTmp));
    writeFileSync(join(privateTmp, 'left-by-a-command'), 'x');
    const second = await backend.plan({ ...base, policy: { ...policy, privateTmp: true } });
    expect(second.env.TMPDIR).toBe(first.env.TMPDIR);

    await backend.close?.();
    expect(existsSync(privateTmp)).toBe(false);
    // Nothing renamed is left beside it either.
    expect(
      (await import('node:fs')).readdirSync(dir).filter((name) => name.startsWith('private-tmp')),
    ).toEqual([]);

    // A plan after close() makes it again.
    await backend.plan({ ...base, policy: { ...policy, privateTmp: true } });
    expect(existsSync(privateTmp)).toBe(true);
    await backend.close?.();
    expect(existsSync(privateTmp)).toBe(false);
  });

  it('refuses a directory that exists already rather than take it over', async () => {
    const dir = workspace();
    const backend = createSeatbeltSandbox({ hostEnv: {}, privateTmpDir: dir });
    await expect(
      backend.plan({
        argv: ['/bin/sh'],
        cwd: '/',
        env: {},
        tty: false,
        policy: {
          fileSystem: { kind: 'restricted', entries: [entry('root', 'read'), entry('slash_tmp', 'write')] },
          network: 'restricted',
          privateTmp: true,
        },
      }),
    ).rejects.toMatchObject({
      code: 'sandbox_unavailable',
      reason: expect.stringContaining('exists already'),
    });
    expect(existsSync(dir)).toBe(true);
    await backend.close?.();
    expect(existsSync(dir)).toBe(true);
  });

  it("defaults to a new directory of its own in ux's per-user runtime directory", async () => {
    const backend = createSeatbeltSandbox({ hostEnv: {} });
    const planned = await backend.plan({
      argv: ['/bin/sh'],
      cwd: '/',
      env: {},
      tty: false,
      policy: {
        fileSystem: { kind: 'restricted', entries: [entry('root', 'read'), entry('slash_tmp', 'write')] },
        network: 'restricted',
        privateTmp: true,
      },
    });
    const made = realpathSync(planned.env.TMPDIR!.replace(/^\/private\/tmp\//, '/tmp/'));
    onTestFinished(() => rmSync(made, { recursive: true, force: true }));
    expect(dirname(made)).toBe(realpathSync(uxRuntimeRoot()));
    expect(basename(made)).toMatch(new RegExp(`^seatbelt-tmp-${process.pid}-[0-9a-f]{8}$`));
    expect(statSync(made).mode & 0o777).toBe(0o700);
    await backend.close?.();
    expect(existsSync(made)).toBe(false);
  });
});
