import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type FileSystemEntry,
  type SandboxPlanRequest,
} from '@ux/protocol';
import type { FsView } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { macFs } from '../test/test-support.js';
import { checkSeatbeltProfile } from './check-seatbelt-profile.js';
import { SEATBELT_BASE_POLICY } from './seatbelt-base-policy.js';
import { planSeatbelt, type SeatbeltHostFacts, type SeatbeltPlan } from './seatbelt-plan.js';

// Golden files are rewritten only when asked: UPDATE_GOLDEN=1 pnpm exec vitest run --project sandbox-seatbelt
const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** A macOS-shaped tree: /tmp, /var and /etc are links into /private, as on a real Mac. */
const MAC = {
  '/tmp': '-> private/tmp',
  '/var': '-> private/var',
  '/etc': '-> private/etc',
  '/private/tmp/': '',
  '/private/etc/': '',
  '/private/var/folders/zz/zyxw_123/T/': '',
  '/Users/me/.zshrc': '',
  '/Users/me/.ssh/id_ed25519': '',
};
const HOME_ENV = { PATH: '/usr/bin:/bin', HOME: '/Users/me', TMPDIR: '/var/folders/zz/zyxw_123/T/' };
const REPO = {
  '/Users/me/project/.git/config': '[core]',
  '/Users/me/project/.git/HEAD': 'ref: refs/heads/main',
  '/Users/me/project/.git/hooks/pre-commit': '#!/bin/sh',
  '/Users/me/project/.git/objects/': '',
  '/Users/me/project/src/main.ts': '',
};

const root: FileSystemEntry = { path: { type: 'special', value: 'root' }, access: 'read' };
const cwd: FileSystemEntry = { path: { type: 'special', value: 'cwd' }, access: 'write' };
const path = (p: string, access: FileSystemEntry['access']): FileSystemEntry => ({
  path: { type: 'path', path: p },
  access,
});
const glob = (pattern: string): FileSystemEntry => ({ path: { type: 'glob', pattern }, access: 'none' });
const restricted = (
  entries: FileSystemEntry[],
  network: EffectivePolicy['network'] = 'restricted',
  more: Omit<EffectivePolicy, 'fileSystem' | 'network'> = {},
): EffectivePolicy => ({
  fileSystem: { kind: 'restricted', entries },
  network,
  ...more,
});
const PROXY = { unixSocket: '/Users/me/.ux/proxy.sock', loopbackPort: 43128 };
/** Docker Desktop's socket (a link into the home directory) and an ssh-agent under /tmp. */
const SOCKETS = {
  '/private/var/run/docker.sock': '-> /Users/me/.docker/run/docker.sock',
  '/Users/me/.docker/run/docker.sock': '',
  '/private/tmp/com.apple.launchd.AbC123/Listeners': '',
};
const workspaceWrite = (network = false) =>
  effectivePolicyFromSandboxPolicy({
    type: 'workspace-write',
    writable_roots: [],
    network_access: network,
    exclude_tmpdir_env_var: false,
    exclude_slash_tmp: false,
  });

/** ux's per-user runtime directory on a Mac (`/tmp/ux-<uid>`) and this backend's private /tmp in it. */
const RUNTIME = '/tmp/ux-501';
const PRIVATE_TMP = `${RUNTIME}/seatbelt-tmp-4242-0a1b2c3d`;
const RUNTIME_FILES = {
  '/private/tmp/ux-501/seatbelt-tmp-4242-0a1b2c3d/': '',
  '/private/tmp/ux-501/snapshots-4242-5e6f7a8b/zsh-1.sh': '',
  '/private/tmp/ux-501/net-4243-99aabbcc/proxy.sock': '',
};
const tmpEntries = (): FileSystemEntry[] => [
  root,
  cwd,
  { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
  { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
];

interface GoldenCase {
  name: string;
  what: string;
  files: Record<string, string>;
  request: Partial<SandboxPlanRequest> & { policy: EffectivePolicy };
  facts?: Partial<SeatbeltHostFacts>;
}

const CASES: GoldenCase[] = [
  {
    name: 'read-only',
    what: 'read-only, network off: reads everywhere, no writes (full base policy shown)',
    files: { ...MAC, ...REPO },
    request: { policy: restricted([root]) },
  },
  {
    name: 'read-only-network',
    what: 'read-only with the network on',
    files: { ...MAC, ...REPO },
    request: { policy: restricted([root], 'enabled') },
  },
  {
    name: 'workspace-write',
    what: 'workspace-write: cwd, /tmp and $TMPDIR writable (canonical /private spellings), .git config and hooks protected',
    files: { ...MAC, ...REPO },
    request: { policy: workspaceWrite() },
  },
  {
    name: 'workspace-write-roots',
    what: 'several writable roots: a nested one, an outside one, a missing one; network on',
    files: { ...MAC, ...REPO, '/Users/me/project/build/': '', '/Users/me/cache/': '' },
    request: {
      policy: restricted(
        [
          root,
          cwd,
          path('build', 'write'),
          path('/Users/me/cache', 'write'),
          path('/Users/me/missing', 'write'),
        ],
        'enabled',
      ),
    },
  },
  {
    name: 'deny-read-paths',
    what: 'deny-read paths outside and inside a writable root, one re-opened by a deeper read entry',
    files: {
      ...MAC,
      ...REPO,
      '/Users/me/project/secrets/public/key.pub': '',
      '/Users/me/project/secrets/key': '',
    },
    request: {
      policy: restricted([
        root,
        cwd,
        path('~/.ssh', 'none'),
        path('secrets', 'none'),
        path('secrets/public', 'read'),
      ]),
    },
  },
  {
    name: 'deny-read-globs',
    what: 'deny-read globs: **/*.env, a class, a ? and a home-relative pattern',
    files: { ...MAC, ...REPO, '/Users/me/project/keys/': '' },
    request: {
      policy: restricted([
        root,
        cwd,
        glob('**/*.env'),
        glob('keys/[!p]*.pem'),
        glob('~/.aws/cred?'),
        glob('/Users/me/*/token'),
      ]),
    },
  },
  {
    name: 'git-protected',
    what: 'protected .git pieces: config, hooks, info/attributes, a submodule and a linked worktree entry; metadata dirs',
    files: {
      ...MAC,
      ...REPO,
      '/Users/me/project/.git/info/attributes': '',
      '/Users/me/project/.git/modules/lib/config': '',
      '/Users/me/project/.git/modules/lib/hooks/': '',
      '/Users/me/project/.git/worktrees/feature/commondir': '../..',
      '/Users/me/project/.git/worktrees/feature/gitdir': '/Users/me/feature/.git',
      '/Users/me/project/.codex/config.toml': '',
      '/Users/me/project/.agents/': '',
    },
    request: { policy: restricted([root, cwd]) },
  },
  {
    name: 'gitdir-worktree',
    what: 'the cwd is a linked worktree whose .git file points into the main repository, also writable (so commits work); its pointers, config and hooks stay protected',
    files: {
      ...MAC,
      '/Users/me/feature/.git': 'gitdir: /Users/me/project/.git/worktrees/feature\n',
      '/Users/me/feature/src/main.ts': '',
      '/Users/me/project/.git/config': '',
      '/Users/me/project/.git/hooks/': '',
      '/Users/me/project/.git/worktrees/feature/commondir': '../..\n',
      '/Users/me/project/.git/worktrees/feature/gitdir': '/Users/me/feature/.git\n',
    },
    request: {
      cwd: '/Users/me/feature',
      policy: restricted([root, cwd, path('/Users/me/project', 'write')]),
    },
  },
  {
    name: 'tty',
    what: 'a PTY was requested: terminal devices allowed',
    files: { ...MAC, ...REPO },
    request: { tty: true, policy: restricted([root, cwd]) },
  },
  {
    name: 'odd-paths',
    what: 'paths with spaces, quotes, a backslash and non-ASCII; a glob with a quote',
    files: {
      ...MAC,
      '/Users/me/My "Quoted" Project/日本語 dir/.git/config': '',
      '/Users/me/My "Quoted" Project/日本語 dir/it\'s\\here/': '',
      '/Users/me/Ωmega cache/': '',
    },
    request: {
      cwd: '/Users/me/My "Quoted" Project/日本語 dir',
      policy: restricted([
        root,
        cwd,
        path('/Users/me/Ωmega cache', 'write'),
        path("it's\\here", 'none'),
        glob('**/secret "x".txt'),
      ]),
    },
  },
  {
    name: 'restricted-reads',
    what: 'reads limited to the platform defaults (minimal) and the project; the project writable',
    files: { ...MAC, ...REPO, '/opt/homebrew/bin/': '' },
    request: {
      policy: restricted([
        { path: { type: 'special', value: 'minimal' }, access: 'read' },
        { path: { type: 'special', value: 'project_roots' }, access: 'write' },
        path('/opt/homebrew', 'read'),
      ]),
    },
  },
  {
    name: 'unrestricted-no-network',
    what: 'no file-system restriction, network off (still enforced by sandbox-exec)',
    files: { ...MAC },
    request: { policy: { fileSystem: { kind: 'unrestricted' }, network: 'restricted' } },
  },
  {
    name: 'proxied',
    what: "network by domain: TCP to the host proxy's loopback port only (a -D parameter), its variables in the environment",
    files: { ...MAC, ...REPO },
    request: { policy: restricted([root, cwd], 'proxied', { networkProxy: PROXY }) },
  },
  {
    name: 'unix-sockets-restricted',
    what: 'network off, two unix sockets listed (one through a symlink, one under /tmp): connect to those only',
    files: { ...MAC, ...REPO, ...SOCKETS },
    request: {
      policy: restricted([root, cwd], 'restricted', {
        allowUnixSockets: ['/var/run/docker.sock', '/tmp/com.apple.launchd.AbC123/Listeners'],
      }),
    },
  },
  {
    name: 'unix-sockets-enabled',
    what: 'network on and one unix socket listed: IP anywhere, mDNSResponder, that socket, no other unix socket',
    files: { ...MAC, ...REPO, ...SOCKETS },
    request: {
      policy: restricted([root, cwd], 'enabled', { allowUnixSockets: ['/var/run/docker.sock'] }),
    },
  },
  {
    name: 'unix-sockets-proxied',
    what: 'network by domain and one unix socket listed, no file-system restriction',
    files: { ...MAC, ...SOCKETS },
    request: {
      policy: {
        fileSystem: { kind: 'unrestricted' },
        network: 'proxied',
        networkProxy: PROXY,
        allowUnixSockets: ['/tmp/com.apple.launchd.AbC123/Listeners'],
      },
    },
  },
  {
    name: 'home-in-root',
    what: 'the home directory is a writable root: its start-up files, ~/.ssh and the other names that run code stay read-only; missing ones cannot be created, also below directories that do not exist (~/.m2/settings.xml: the missing ~/.m2 is then a parent that cannot be created either, Seatbelt cannot follow it), and ~/.local/bin on PATH is read-only',
    files: {
      ...MAC,
      '/Users/me/.bash_profile': '',
      '/Users/me/.gitconfig': '',
      '/Users/me/.config/': '',
      '/Users/me/.local/bin/': '',
    },
    request: {
      cwd: '/Users/me',
      env: { ...HOME_ENV, PATH: '/Users/me/.local/bin:/usr/bin:/bin' },
      policy: restricted([root, cwd]),
    },
  },
  {
    name: 'nested-workspace',
    what: 'a workspace inside a writable /tmp keeps its own protected names (and a vendored repository found at the start its own): the outer root excludes them too, in every letter case',
    files: {
      ...MAC,
      '/private/tmp/ws/.git/config': '',
      '/private/tmp/ws/.git/hooks/': '',
      '/private/tmp/ws/vendor/lib/.git/config': '',
      '/private/tmp/ws/vendor/lib/.git/hooks/': '',
      '/private/tmp/ws/src/main.ts': '',
    },
    request: {
      cwd: '/tmp/ws',
      policy: restricted(tmpEntries(), 'restricted', { knownRepositories: ['/tmp/ws/vendor/lib'] }),
    },
  },
  {
    name: 'writable-root-inside-protected',
    what: 'the home directory is a writable root and so is ~/.config/nvim, which the home protects: one predicate (protectedEntryFor), so nothing is granted for the deeper root',
    files: { ...MAC, '/Users/me/.config/nvim/init.lua': '', '/Users/me/dotfiles/': '' },
    request: {
      cwd: '/Users/me/dotfiles',
      policy: restricted([root, cwd, path('/Users/me', 'write'), path('/Users/me/.config/nvim', 'write')]),
    },
  },
  {
    name: 'hidden',
    what: "ux's own state under a writable /tmp (UX_HOME there): UX_HOME read-only, its quarantine and the runtime directory neither readable nor writable, in every letter case for writes",
    files: {
      ...MAC,
      ...REPO,
      ...RUNTIME_FILES,
      '/private/tmp/uxhome/rules/default.rules': '',
      '/private/tmp/uxhome/quarantine/1/.codex/x': '',
    },
    request: {
      policy: restricted(tmpEntries(), 'restricted', {
        hostState: {
          readOnly: ['/tmp/uxhome', '/tmp/uxhome/requirements.toml'],
          hidden: ['/tmp/uxhome/quarantine', RUNTIME, '/run/user/501/ux'],
        },
      }),
    },
  },
  {
    name: 'private-tmp',
    what: "a private /tmp: neither /private/tmp nor $TMPDIR is writable; the backend's own directory is, TMPDIR points at it, and it stays reachable inside the hidden runtime directory",
    files: { ...MAC, ...REPO, ...RUNTIME_FILES },
    request: {
      policy: restricted(tmpEntries(), 'restricted', { privateTmp: true, hostState: { hidden: [RUNTIME] } }),
    },
    facts: { privateTmpDir: PRIVATE_TMP },
  },
  {
    name: 'host-paths',
    what: "restricted reads, a private /tmp and a hidden runtime directory: what the launch reads (the shell through a link, its snapshot in the runtime directory, ux's PATH directory, a helper inside the workspace) stays readable, never writable; a missing one is skipped",
    files: {
      ...MAC,
      ...REPO,
      ...RUNTIME_FILES,
      '/bin/zsh': '',
      '/opt/homebrew/bin/zsh': '-> /opt/homebrew/Cellar/zsh/5.9/bin/zsh',
      '/opt/homebrew/Cellar/zsh/5.9/bin/zsh': '',
      '/Users/me/.ux/bin/apply_patch': '',
      '/Users/me/project/tools/ux-helper': '',
    },
    request: {
      argv: ['/opt/homebrew/bin/zsh', '-c', 'make test'],
      hostPaths: [
        '/opt/homebrew/bin/zsh',
        '/Users/me/.ux/bin',
        '/tmp/ux-501/snapshots-4242-5e6f7a8b/zsh-1.sh',
        '/Users/me/project/tools/ux-helper',
        '/Users/me/.ux/bin/missing',
      ],
      policy: restricted(
        [
          { path: { type: 'special', value: 'minimal' }, access: 'read' },
          { path: { type: 'special', value: 'project_roots' }, access: 'write' },
          { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
        ],
        'restricted',
        { privateTmp: true, hostState: { hidden: [RUNTIME] } },
      ),
    },
    facts: { privateTmpDir: PRIVATE_TMP },
  },
  {
    name: 'symlinked-root',
    what: 'the cwd is a symlink to another volume, and its .git is a symlink: the root is resolved, the link kept',
    files: {
      ...MAC,
      '/Users/me/link': '-> /Volumes/Work/project',
      '/Volumes/Work/project/.git': '-> /Volumes/Work/repos/project.git',
      '/Volumes/Work/repos/project.git/config': '',
    },
    request: { cwd: '/Users/me/link', policy: restricted([root, cwd]) },
  },
];

function planCase(testCase: GoldenCase, fs: FsView): SeatbeltPlan {
  return planSeatbelt(
    {
      argv: ['/bin/zsh', '-lc', 'make test'],
      cwd: '/Users/me/project',
      env: HOME_ENV,
      tty: false,
      ...testCase.request,
    },
    { fs, hostEnv: {}, ...testCase.facts },
  );
}

function render(testCase: GoldenCase, plan: SeatbeltPlan): string {
  const profileIndex = plan.argv.indexOf('-p') + 1;
  const argv = plan.argv.map((arg, i) => (i === profileIndex ? '<profile below>' : arg));
  const given: Record<string, string> = { ...HOME_ENV, ...testCase.request.env };
  const added = Object.entries(plan.env).filter(([name]) => !(name in given));
  const changed = Object.entries(plan.env).filter(([name, value]) => name in given && given[name] !== value);
  const profile =
    testCase.name === 'read-only'
      ? plan.profile
      : plan.profile.replace(
          SEATBELT_BASE_POLICY,
          '; … SEATBELT_BASE_POLICY, shown in read-only.golden.txt …',
        );
  return [
    `# ${testCase.name}: ${testCase.what}`,
    '## argv',
    ...argv,
    '## env added',
    ...added.map(([name, value]) => `${name}=${value}`),
    ...(changed.length > 0 ? ['## env changed', ...changed.map(([name, value]) => `${name}=${value}`)] : []),
    '## enforcement',
    `fileSystem: ${plan.enforcement.fileSystem}`,
    `network: ${plan.enforcement.network}`,
    ...plan.enforcement.notes.map((note) => `note: ${note}`),
    '## profile',
    profile,
  ].join('\n');
}

describe('Seatbelt golden plans', () => {
  it('covers at least twelve policies', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(12);
  });

  for (const testCase of CASES) {
    it(`${testCase.name}: ${testCase.what}`, () => {
      const plan = planCase(testCase, macFs(testCase.files));

      expect(checkSeatbeltProfile(plan.profile, plan.parameters)).toEqual([]);
      expect(plan.argv.slice(0, 2)).toEqual(['/usr/bin/sandbox-exec', '-p']);
      const argv = testCase.request.argv ?? ['/bin/zsh', '-lc', 'make test'];
      expect(plan.argv.slice(-argv.length - 1)).toEqual(['--', ...argv]);
      // Whole request paths travel as -D parameters; only the part below a writable root or a glob base
      // enters the profile text, as a regex, so no root or home path does.
      for (const marker of ['/Users/', '/Volumes/Work', '/private/var/folders']) {
        expect(plan.profile).not.toContain(marker);
      }
      for (const [name, value] of plan.parameters) expect(plan.argv).toContain(`-D${name}=${value}`);

      const file = join(GOLDEN_DIR, `${testCase.name}.golden.txt`);
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
