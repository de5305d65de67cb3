import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EffectivePolicy, FileSystemEntry, SandboxPlanRequest } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { decodeLaunchSpec } from './launch-spec.js';
import { accessMaskNames } from './win32-access.js';
import { win32MemoryFsView } from './win32-memory-fs-view.js';
import { planWindowsToken, type WindowsTokenHostFacts, type WindowsTokenPlan } from './windows-token-plan.js';

// Golden files are rewritten only when asked: UPDATE_GOLDEN=1 pnpm exec vitest run --project sandbox-windows-token
const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const NODE = 'C:\\Program Files\\nodejs\\node.exe';
const LAUNCHER =
  'C:\\Users\\me\\AppData\\Roaming\\npm\\node_modules\\@ux\\sandbox-windows-token\\dist\\windows-token-launcher.js';
const ENV = {
  Path: 'C:\\Windows\\system32;C:\\Windows',
  USERPROFILE: 'C:\\Users\\me',
  TEMP: 'C:\\Users\\me\\AppData\\Local\\Temp',
};
const REPO = {
  'C:\\Users\\me\\project\\.git\\config': '[core]',
  'C:\\Users\\me\\project\\.git\\HEAD': 'ref: refs/heads/main',
  'C:\\Users\\me\\project\\.git\\hooks\\pre-commit.sample': '',
  'C:\\Users\\me\\project\\.git\\objects\\': '',
  'C:\\Users\\me\\project\\src\\main.ts': '',
  'C:\\Users\\me\\AppData\\Local\\Temp\\': '',
};

const root: FileSystemEntry = { path: { type: 'special', value: 'root' }, access: 'read' };
const cwd: FileSystemEntry = { path: { type: 'special', value: 'cwd' }, access: 'write' };
const temp: FileSystemEntry = { path: { type: 'special', value: 'tmpdir' }, access: 'write' };
const path = (p: string, access: FileSystemEntry['access']): FileSystemEntry => ({
  path: { type: 'path', path: p },
  access,
});
const policy = (
  entries: FileSystemEntry[],
  network: 'restricted' | 'enabled' = 'restricted',
  more: Omit<EffectivePolicy, 'fileSystem' | 'network'> = {},
): EffectivePolicy => ({
  fileSystem: { kind: 'restricted', entries },
  network,
  ...more,
});
/** ux's per-user runtime directory on Windows (%TEMP%\ux-<user>) and this backend's private temp in it. */
const RUNTIME = 'C:\\Users\\me\\AppData\\Local\\Temp\\ux-me';
const PRIVATE_TMP = `${RUNTIME}\\windows-tmp-4242-0a1b2c3d`;
const RUNTIME_FILES = {
  [`${PRIVATE_TMP}\\`]: '',
  [`${RUNTIME}\\exec-server-4243-99aabbcc\\`]: '',
  'C:\\Users\\me\\.ux\\quarantine\\1\\': '',
  'C:\\Users\\me\\.ux\\bin\\apply_patch.cmd': '',
};

interface GoldenCase {
  name: string;
  what: string;
  files: Record<string, string>;
  request: Partial<SandboxPlanRequest> & { policy: EffectivePolicy };
  facts?: Partial<WindowsTokenHostFacts>;
}

const LONG = `C:\\Users\\me\\${'deeply-nested-directory-name\\'.repeat(9)}project`;

const CASES: GoldenCase[] = [
  {
    name: 'read-only',
    what: 'read-only, network off: the token is write-restricted and nothing is granted',
    files: REPO,
    request: { policy: policy([root]) },
  },
  {
    name: 'workspace-write',
    what: 'workspace-write: the cwd and %TEMP% granted, .git config and hooks denied, parents guarded, network advisory',
    files: REPO,
    request: { policy: policy([root, cwd, temp]) },
  },
  {
    name: 'workspace-write-network',
    what: 'workspace-write with the network on: no proxy poisoning',
    files: REPO,
    request: { policy: policy([root, cwd], 'enabled') },
  },
  {
    name: 'several-roots',
    what: 'roots on another drive and on a UNC share, one missing, one nested',
    files: {
      ...REPO,
      'D:\\cache\\': '',
      '\\\\build-server\\share\\out\\.git\\config': '',
      'C:\\Users\\me\\project\\target\\': '',
    },
    request: {
      policy: policy([
        root,
        cwd,
        path('D:\\cache', 'write'),
        path('\\\\build-server\\share\\out', 'write'),
        path('E:\\missing', 'write'),
        path('target', 'write'),
      ]),
    },
  },
  {
    name: 'git-protected',
    what: 'protected .git pieces: config, hooks, info\\attributes, a submodule, a linked worktree entry; .codex and .agents',
    files: {
      ...REPO,
      'C:\\Users\\me\\project\\.git\\info\\attributes': '',
      'C:\\Users\\me\\project\\.git\\modules\\lib\\config': '',
      'C:\\Users\\me\\project\\.git\\modules\\lib\\hooks\\': '',
      'C:\\Users\\me\\project\\.git\\worktrees\\feature\\commondir': '../..',
      'C:\\Users\\me\\project\\.git\\worktrees\\feature\\gitdir': 'C:/Users/me/feature/.git',
      'C:\\Users\\me\\project\\.codex\\config.toml': '',
      'C:\\Users\\me\\project\\.agents\\': '',
    },
    request: { policy: policy([root, cwd]) },
  },
  {
    name: 'gitdir-worktree',
    what: 'the cwd is a linked worktree (forward-slash gitdir:); the main repository is writable too, its pointers and config are not',
    files: {
      ...REPO,
      'C:\\Users\\me\\feature\\.git': 'gitdir: C:/Users/me/project/.git/worktrees/feature\n',
      'C:\\Users\\me\\project\\.git\\worktrees\\feature\\commondir': '../..\n',
      'C:\\Users\\me\\project\\.git\\worktrees\\feature\\gitdir': 'C:/Users/me/feature/.git\n',
    },
    request: {
      cwd: 'C:\\Users\\me\\feature',
      policy: policy([root, cwd, path('C:\\Users\\me\\project', 'write')]),
    },
  },
  {
    name: 'odd-paths',
    what: 'spaces, quotes and non-ASCII in the cwd and in arguments, a lower-case drive letter',
    files: { 'C:\\Users\\me\\My Project (ü)\\.git\\config': '', 'C:\\Users\\me\\My Project (ü)\\日本\\': '' },
    request: {
      cwd: 'c:\\users\\me\\my project (ü)',
      argv: [
        'C:\\Program Files\\Git\\bin\\bash.exe',
        '-lc',
        'echo "a b" \\\\ trailing\\',
        '',
        'C:\\My Dir\\',
      ],
      policy: policy([root, cwd]),
    },
  },
  {
    name: 'long-paths',
    what: 'a workspace deeper than MAX_PATH: ACL paths in the \\\\?\\ form',
    files: { [`${LONG}\\.git\\config`]: '', [`${LONG}\\.git\\hooks\\`]: '' },
    request: { cwd: LONG, policy: policy([root, cwd]) },
  },
  {
    name: 'no-persist',
    what: 'persistGrants off: the root grant goes to the per-run SID and is removed after the run',
    files: REPO,
    request: { policy: policy([root, cwd]) },
    facts: { persistGrants: false, sandboxId: 'ci-job-42' },
  },
  {
    name: 'unrestricted',
    what: 'unrestricted file system, network off: no token, no launcher, advisory network settings only',
    files: REPO,
    request: { policy: { fileSystem: { kind: 'unrestricted' }, network: 'restricted' } },
  },
  {
    name: 'proxy-kept',
    what: 'a proxy already set (lower case) is kept as given and named in the notes',
    files: REPO,
    request: {
      env: { ...ENV, https_proxy: 'http://proxy.corp:3128', PAGER: 'less' },
      policy: policy([root, cwd]),
    },
  },
  {
    name: 'home-in-root',
    what: 'the home directory is a writable root: existing start-up files, .ssh, .config\\git and a PATH directory inside it denied, missing ones noted',
    files: {
      'C:\\Users\\me\\.bashrc': '',
      'C:\\Users\\me\\.ssh\\config': '',
      'C:\\Users\\me\\.gitconfig': '',
      'C:\\Users\\me\\.config\\git\\config': '',
      'C:\\Users\\me\\tools\\bin\\': '',
    },
    request: {
      cwd: 'C:\\Users\\me',
      env: { ...ENV, Path: 'C:\\Users\\me\\tools\\bin;C:\\Windows\\system32' },
      policy: policy([root, cwd]),
    },
  },
  {
    name: 'nested-workspace',
    what: 'a workspace inside a writable %TEMP% keeps its own protected names; a writable root inside a protected path (the workspace .git\\hooks) gets no grant',
    files: {
      ...REPO,
      'C:\\Users\\me\\AppData\\Local\\Temp\\ws\\.git\\config': '',
      'C:\\Users\\me\\AppData\\Local\\Temp\\ws\\.git\\hooks\\': '',
      'C:\\Users\\me\\AppData\\Local\\Temp\\ws\\src\\': '',
    },
    request: {
      cwd: 'C:\\Users\\me\\AppData\\Local\\Temp\\ws',
      policy: policy([root, cwd, temp, path('.git\\hooks', 'write')]),
    },
  },
  {
    name: 'hidden',
    what: "ux's own state: with %TEMP% writable, the runtime directory inside it gets a deny-write entry (reads cannot be denied: noted); the quarantine outside every root needs none",
    files: { ...REPO, ...RUNTIME_FILES },
    request: {
      policy: policy([root, cwd, temp], 'restricted', {
        hostState: {
          readOnly: ['C:\\Users\\me\\.ux'],
          hidden: [RUNTIME, 'C:\\Users\\me\\.ux\\quarantine', 'C:\\missing\\ux'],
        },
      }),
    },
  },
  {
    name: 'private-tmp',
    what: "a private temporary directory: %TEMP% is no writable root; the backend's own directory is granted to the run SID for the run, TEMP and TMP point at it",
    files: { ...REPO, ...RUNTIME_FILES },
    request: {
      policy: policy([root, cwd, temp], 'restricted', { privateTmp: true, hostState: { hidden: [RUNTIME] } }),
    },
    facts: { privateTmpDir: PRIVATE_TMP },
  },
  {
    name: 'host-paths',
    what: 'what the launch reads: readable anyway (reads are not restricted); one inside the workspace is denied writes; one outside every root needs nothing; a missing one is skipped',
    files: { ...REPO, ...RUNTIME_FILES, 'C:\\Users\\me\\project\\tools\\helper.exe': '' },
    request: {
      hostPaths: [
        'C:\\Users\\me\\.ux\\bin',
        'C:\\Users\\me\\project\\tools\\helper.exe',
        'C:\\Users\\me\\.ux\\bin\\missing.exe',
      ],
      policy: policy([root, cwd]),
    },
  },
  {
    name: 'read-only-carve-out',
    what: 'a read entry inside the writable root (docs) becomes a deny-write carve-out',
    files: { ...REPO, 'C:\\Users\\me\\project\\docs\\index.md': '' },
    request: { policy: policy([root, cwd, path('docs', 'read')]) },
  },
];

function planCase(testCase: GoldenCase): WindowsTokenPlan {
  return planWindowsToken(
    {
      argv: ['C:\\Windows\\System32\\cmd.exe', '/d', '/c', 'npm test'],
      cwd: 'C:\\Users\\me\\project',
      env: ENV,
      tty: false,
      ...testCase.request,
    },
    { fs: win32MemoryFsView(testCase.files), nodePath: NODE, launcherPath: LAUNCHER, ...testCase.facts },
  );
}

function render(testCase: GoldenCase, plan: WindowsTokenPlan): string {
  const planIndex = plan.argv.indexOf('--plan') + 1;
  return `${JSON.stringify(
    {
      case: `${testCase.name}: ${testCase.what}`,
      argv: plan.argv.map((arg, i) => (planIndex > 0 && i === planIndex ? '<launch spec below>' : arg)),
      cwd: plan.cwd,
      commandLine: plan.commandLine,
      envAdded: plan.envAdded,
      enforcement: plan.enforcement,
      sandboxId: plan.sandboxId,
      capabilitySid: plan.capabilitySid,
      token: plan.token && { ...plan.token, flags: `0x${plan.token.flags.toString(16)}` },
      aces: plan.aces.map((ace) => ({ ...ace, mask: accessMaskNames(ace.mask).join('|'), flags: ace.flags })),
    },
    null,
    2,
  )}\n`;
}

describe('Windows restricted-token golden plans', () => {
  it('covers at least ten policies', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(10);
  });

  for (const testCase of CASES) {
    it(`${testCase.name}: ${testCase.what}`, () => {
      const plan = planCase(testCase);
      if (plan.launch) {
        // The argv carries exactly the plan: what the launcher decodes is what the golden file shows.
        const planIndex = plan.argv.indexOf('--plan') + 1;
        expect(plan.argv.slice(0, 2)).toEqual([NODE, LAUNCHER]);
        expect(decodeLaunchSpec(plan.argv[planIndex]!)).toEqual(plan.launch);
        expect(plan.argv.slice(planIndex + 1, planIndex + 2)).toEqual(['--']);
        expect(plan.launch.aces).toBe(plan.aces);
      }
      const file = join(GOLDEN_DIR, `${testCase.name}.golden.json`);
      const text = render(testCase, plan);
      if (UPDATE) {
        mkdirSync(GOLDEN_DIR, { recursive: true });
        writeFileSync(file, text);
      } else {
        expect(existsSync(file), `${file} is missing; run with UPDATE_GOLDEN=1 to create it`).toBe(true);
        expect(text).toBe(readFileSync(file, 'utf8'));
      }
    });
  }
});
