import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
import { SANDBOX_ALLOW_MASK, SANDBOX_DENY_WRITE_MASK } from './win32-access.js';
import { win32MemoryFsView } from './win32-memory-fs-view.js';
import { planWindowsToken, type WindowsTokenHostFacts } from './windows-token-plan.js';
import { createWindowsTokenSandbox } from './windows-token-sandbox.js';

/* The trust-boundary fields of the policy as ACEs and variables of the plan (no Windows here). */

const TEMP = 'C:\\Users\\me\\AppData\\Local\\Temp';
const RUNTIME = `${TEMP}\\ux-me`;
const PRIVATE = `${RUNTIME}\\windows-tmp-1-00000000`;
const fs = win32MemoryFsView({
  'C:\\w\\.git\\config': '',
  'C:\\w\\tools\\helper.exe': '',
  'C:\\w\\src\\': '',
  [`${PRIVATE}\\`]: '',
  [`${RUNTIME}\\exec-server-2-11111111\\`]: '',
  'C:\\Users\\me\\.ux\\quarantine\\1\\': '',
  'C:\\Users\\me\\.ux\\bin\\': '',
});
const facts: WindowsTokenHostFacts = { fs, nodePath: 'C:\\node.exe', launcherPath: 'C:\\ux\\launcher.js' };
const special = (value: 'root' | 'cwd' | 'tmpdir', access: FileSystemEntry['access']) =>
  ({ path: { type: 'special', value }, access }) as FileSystemEntry;
const policy = (more: Omit<EffectivePolicy, 'fileSystem' | 'network'> = {}): EffectivePolicy => ({
  fileSystem: {
    kind: 'restricted',
    entries: [special('root', 'read'), special('cwd', 'write'), special('tmpdir', 'write')],
  },
  network: 'restricted',
  ...more,
});
const request = (overrides: Partial<SandboxPlanRequest> = {}): SandboxPlanRequest => ({
  argv: ['cmd.exe', '/c', 'dir'],
  cwd: 'C:\\w',
  env: { Path: 'C:\\Windows', USERPROFILE: 'C:\\Users\\me', Temp: TEMP, tmp: TEMP },
  policy: policy(),
  tty: false,
  ...overrides,
});
const plan = (overrides: Partial<SandboxPlanRequest> = {}, more: Partial<WindowsTokenHostFacts> = {}) =>
  planWindowsToken(request(overrides), { ...facts, ...more });
const aceFor = (planned: ReturnType<typeof plan>, path: string, type: 'allow' | 'deny') =>
  planned.aces.filter((ace) => ace.type === type && ace.path.toLowerCase() === path.toLowerCase());

describe("ux's hidden directories (Windows)", () => {
  const planned = plan({
    policy: policy({ hostState: { hidden: [RUNTIME, 'C:\\Users\\me\\.ux\\quarantine', 'C:\\gone'] } }),
  });

  it('get a deny-write entry for the run where a writable root holds them, with their parents guarded', () => {
    expect(aceFor(planned, RUNTIME, 'deny')).toEqual([
      expect.objectContaining({ trustee: 'run', mask: SANDBOX_DENY_WRITE_MASK, flags: 3, undo: 'after-run' }),
    ]);
    expect(aceFor(planned, TEMP, 'deny')).toHaveLength(1);
    // Outside every root the token has no grant to write anyway: no entry on ux's own quarantine.
    expect(aceFor(planned, 'C:\\Users\\me\\.ux\\quarantine', 'deny')).toEqual([]);
    // Control: without the field, %TEMP%\ux-me is as writable as the rest of %TEMP%.
    expect(aceFor(plan(), RUNTIME, 'deny')).toEqual([]);
  });

  it('says that reads are not denied', () => {
    expect(planned.enforcement.notes).toContain(
      `ux's own directories are unwritable to commands but NOT hidden from reads (a write-restricted token cannot deny reads; that needs the elevated sandbox): ${RUNTIME}, C:\\Users\\me\\.ux\\quarantine`,
    );
  });
});

describe('a private temporary directory (Windows)', () => {
  const withPrivate = policy({ privateTmp: true });

  it('replaces %TEMP%: no grant there, a per-run grant on its own directory, TEMP and TMP pointing at it', () => {
    const planned = plan({ policy: withPrivate }, { privateTmpDir: PRIVATE });
    expect(planned.aces.filter((ace) => ace.type === 'allow').map((ace) => [ace.path, ace.trustee])).toEqual([
      ['C:\\w', 'capability'],
      [PRIVATE, 'run'],
    ]);
    expect(aceFor(planned, PRIVATE, 'allow')[0]).toMatchObject({
      mask: SANDBOX_ALLOW_MASK,
      flags: 3,
      undo: 'after-run',
    });
    // The request's own spellings are kept; no second, differently cased variable appears.
    expect(planned.env).toMatchObject({ Temp: PRIVATE, tmp: PRIVATE });
    expect(Object.keys(planned.env).filter((name) => /^(temp|tmp)$/i.test(name))).toEqual(['Temp', 'tmp']);
    expect(planned.env.TMPDIR).toBeUndefined();
    // The persisted grant's SID depends on the granted roots only (here the workspace), not on this
    // backend's directory, so the next session reuses the workspace's grant.
    const workspaceOnly = plan({
      policy: {
        fileSystem: { kind: 'restricted', entries: [special('root', 'read'), special('cwd', 'write')] },
        network: 'restricted',
      },
    });
    expect(planned.capabilitySid).toBe(workspaceOnly.capabilitySid);
  });

  it('replaces TMPDIR too when the request sets it', () => {
    const planned = plan(
      { policy: withPrivate, env: { USERPROFILE: 'C:\\Users\\me', TEMP, TMPDIR: '/tmp' } },
      { privateTmpDir: PRIVATE },
    );
    expect([planned.env.TEMP, planned.env.TMP, planned.env.TMPDIR]).toEqual([PRIVATE, PRIVATE, PRIVATE]);
  });

  it('asks for the directory only when the policy has one', () => {
    let asked = 0;
    const make = () => {
      asked++;
      return PRIVATE;
    };
    const without = plan({}, { privateTmpDir: make });
    expect(asked).toBe(0);
    expect(without.env.Temp).toBe(TEMP);
    expect(without.aces.some((ace) => ace.path === TEMP && ace.type === 'allow')).toBe(true);
    plan({ policy: withPrivate }, { privateTmpDir: make });
    expect(asked).toBe(1);
  });

  it('is refused without a directory, with a relative one, and with one that is or holds a writable root', () => {
    const caught = (privateTmpDir?: string) => {
      try {
        plan({ policy: withPrivate }, privateTmpDir === undefined ? {} : { privateTmpDir });
      } catch (error) {
        return error;
      }
      throw new Error('expected a refusal');
    };
    expect(caught()).toBeInstanceOf(SandboxUnavailableError);
    expect(caught('tmp\\x')).toBeInstanceOf(InvalidArgumentsError);
    expect((caught('C:\\') as SandboxUnavailableError).reason).toContain(
      'is or holds the writable root C:\\w',
    );
    expect((caught('c:\\W') as SandboxUnavailableError).reason).toContain('is or holds the writable root');
  });

  it('inside a writable root (a workspace that holds %TEMP%): its parents cannot be renamed, and the notes say it is shared', () => {
    const planned = plan(
      { cwd: 'C:\\Users\\me', policy: withPrivate },
      { privateTmpDir: PRIVATE, fs: win32MemoryFsView({ [`${PRIVATE}\\`]: '' }) },
    );
    expect(aceFor(planned, RUNTIME, 'deny')).toEqual([
      expect.objectContaining({ mask: expect.any(Number), flags: 0, why: expect.stringMatching(/^parent/) }),
    ]);
    expect(planned.enforcement.notes).toContain(
      'the private temporary directory lies inside a writable root, so other commands that can write that root can write it too',
    );
  });
});

describe('what the launch reads (Windows)', () => {
  it('is denied writes inside a writable root, needs nothing elsewhere, and is noted when it holds a root', () => {
    const planned = plan({
      hostPaths: ['C:\\w\\tools\\helper.exe', 'C:\\Users\\me\\.ux\\bin', 'C:\\w\\missing.exe', 'C:\\'],
    });
    expect(aceFor(planned, 'C:\\w\\tools\\helper.exe', 'deny')).toEqual([
      expect.objectContaining({ mask: SANDBOX_DENY_WRITE_MASK, flags: 0 }),
    ]);
    expect(aceFor(planned, 'C:\\w\\tools', 'deny')).toHaveLength(1);
    expect(planned.aces.some((ace) => ace.path.toLowerCase().startsWith('c:\\users\\me\\.ux'))).toBe(false);
    expect(planned.aces.some((ace) => ace.path === 'C:\\w\\missing.exe')).toBe(false);
    expect(planned.enforcement.notes).toContain(
      'C:\\, which the launch reads, is or holds a writable root, so it stays writable',
    );
    // Control: without host paths the helper is as writable as the workspace.
    expect(aceFor(plan(), 'C:\\w\\tools\\helper.exe', 'deny')).toEqual([]);
  });
});

describe('createWindowsTokenSandbox: its private temporary directory', () => {
  it('is made at the first plan that needs it, shared by later plans, and removed by close()', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-windows-tmp-')));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const privateTmp = join(dir, 'private-tmp');
    const backend = createWindowsTokenSandbox({
      fs: win32MemoryFsView({ 'C:\\w\\': '' }),
      nodePath: 'C:\\node.exe',
      launcherPath: 'C:\\ux\\launcher.js',
      privateTmpDir: privateTmp,
    });
    const base = { argv: ['cmd.exe'], cwd: 'C:\\w', env: { TEMP }, tty: false };
    const entries = [special('root', 'read'), special('cwd', 'write'), special('tmpdir', 'write')];
    const without = { fileSystem: { kind: 'restricted' as const, entries }, network: 'enabled' as const };

    await backend.plan({ ...base, policy: without });
    expect(existsSync(privateTmp)).toBe(false);
    const first = await backend.plan({ ...base, policy: { ...without, privateTmp: true } });
    expect(existsSync(privateTmp)).toBe(true);
    expect(first.env.TEMP).toBe(privateTmp.replaceAll('/', '\\'));
    writeFileSync(join(privateTmp, 'left-by-a-command'), 'x');
    const second = await backend.plan({ ...base, policy: { ...without, privateTmp: true } });
    expect(second.env.TEMP).toBe(first.env.TEMP);

    await backend.close?.();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("defaults to a new directory of its own in ux's per-user runtime directory", async () => {
    const backend = createWindowsTokenSandbox({
      fs: win32MemoryFsView({ 'C:\\w\\': '' }),
      nodePath: 'C:\\node.exe',
      launcherPath: 'C:\\ux\\launcher.js',
    });
    const planned = await backend.plan({
      argv: ['cmd.exe'],
      cwd: 'C:\\w',
      env: { TEMP },
      tty: false,
      policy: { ...policy(), network: 'enabled', privateTmp: true },
    });
    const made = planned.env.TEMP!.replaceAll('\\', '/');
    onTestFinished(() => rmSync(made, { recursive: true, force: true }));
    expect(dirname(made)).toBe(realpathSync(uxRuntimeRoot()));
    expect(basename(made)).toMatch(new RegExp(`^windows-tmp-${process.pid}-[0-9a-f]{8}$`));
    expect(statSync(made).mode & 0o777).toBe(0o700);
    await backend.close?.();
    expect(existsSync(made)).toBe(false);
  });
});
