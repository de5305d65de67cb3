// The trust boundary: nothing a sandboxed command can write is trusted by anything that
// runs outside the sandbox. One describe per attack class; each attacks through the shipped `ux exec`
// or `ux mcp` with the default sandbox and checks the effect on the host (a canary that planted code
// would create, a file outside every writable root, a rule or config file), and each runs a control
// that shows the attack works where the protection is absent, so no test passes vacuously.
//
// Canaries and victims live under /var/tmp (outside every default writable root). Run with
//   pnpm exec vitest run apps/cli/test/trust-boundary.integration.test.ts

import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { uniqueMarker } from './cli-harness.js';
import {
  applyPatchCommand,
  canariesIn,
  canaryDir,
  fileHash,
  hostEnv,
  hostGit,
  hostSession,
  initRepo,
  type Layout,
  mcpSession,
  privateTmpOff,
  probeFilesLeft,
  probeFindings,
  probeScript,
  removeProbeFiles,
  runtimeFilesOf,
  runtimeRootCandidates,
  sh,
  slashTmpDir,
  startBackgroundUxExec,
  uxExec,
  uxHomeAt,
  varTmpDir,
} from './trust-boundary-harness.js';

useLeakCheck();

const LONG = 180_000;

/** A git `core.fsmonitor` value that leaves `canary` when the host's git runs it. */
const fsmonitor = (canary: string) => `touch ${canary}; false`;

// ---------------------------------------------------------------------------------------------------
// Item 1: the door's apply_patch writer, in a workspace nested inside another writable root.

interface NestedLayout {
  name: string;
  make(): Promise<Layout>;
}

const NESTED_WORKSPACES: NestedLayout[] = [
  {
    name: 'a workspace inside a --writable-root parent',
    make: async () => {
      const base = varTmpDir('ux-tb-');
      const parent = join(base, 'parent');
      const home = uxHomeAt({
        workspace: join(parent, 'ws'),
        uxHome: join(base, 'ux-home'),
        home: join(base, 'ux-home'),
        requirements: join(base, 'requirements.toml'),
      });
      return { home, args: ['--writable-root', parent] };
    },
  },
  {
    name: 'a workspace under /tmp with private_tmp = false',
    make: async () => {
      const base = varTmpDir('ux-tb-');
      const home = uxHomeAt({
        workspace: join(slashTmpDir('ux-tb-'), 'ws'),
        uxHome: join(base, 'ux-home'),
        home: join(base, 'ux-home'),
        requirements: join(base, 'requirements.toml'),
      });
      return { home, args: await privateTmpOff() };
    },
  },
];

/**
 * Workspaces that are not repositories, two levels below a writable root: `ancestor` lies between the
 * root and the workspace, where git looks for a repository when it runs in the workspace.
 */
const ANCESTOR_LAYOUTS: { name: string; make(): Promise<Layout & { ancestor: string }> }[] = [
  {
    name: 'a workspace two levels inside a --writable-root parent',
    make: async () => {
      const base = varTmpDir('ux-tb-');
      const parent = join(base, 'parent');
      const ancestor = join(parent, 'a');
      const home = uxHomeAt({
        workspace: join(ancestor, 'ws'),
        uxHome: join(base, 'ux-home'),
        home: join(base, 'ux-home'),
        requirements: join(base, 'requirements.toml'),
      });
      return { home, args: ['--writable-root', parent], ancestor };
    },
  },
  {
    name: 'a workspace two levels under /tmp with private_tmp = false',
    make: async () => {
      const base = varTmpDir('ux-tb-');
      const ancestor = join(slashTmpDir('ux-tb-'), 'a');
      const home = uxHomeAt({
        workspace: join(ancestor, 'ws'),
        uxHome: join(base, 'ux-home'),
        home: join(base, 'ux-home'),
        requirements: join(base, 'requirements.toml'),
      });
      return { home, args: await privateTmpOff(), ancestor };
    },
  },
];

/** A patch that makes a repository (with an fsmonitor leaving `canary`) at `dir`, relative to the workspace. */
function repositoryPatch(dir: string, canary: string): string {
  return [
    `*** Add File: ${dir}/.git/HEAD\n+ref: refs/heads/main\n`,
    `*** Add File: ${dir}/.git/config\n+[core]\n+\trepositoryformatversion = 0\n+\tfsmonitor = "${fsmonitor(canary)}"\n`,
    `*** Add File: ${dir}/.git/objects/info/keep\n+x\n`,
    `*** Add File: ${dir}/.git/refs/heads/keep\n+x\n`,
  ].join('');
}

describe('item 1: apply_patch in a workspace nested in another writable root', () => {
  it.each(NESTED_WORKSPACES)(
    '$name: .git/config gains no fsmonitor, and the host git status runs nothing',
    async (layout) => {
      const canaries = canaryDir();
      // Control: a planted fsmonitor runs when the host's git reads the repository.
      const control = initRepo(join(varTmpDir('ux-tb-control-'), 'repo'));
      hostGit(control, ['config', 'core.fsmonitor', fsmonitor(join(canaries, 'control'))]);
      hostGit(control, ['status']);
      expect(canariesIn(canaries), 'the host git ran the planted fsmonitor').toEqual(['control']);

      const { home, args } = await layout.make();
      const ws = initRepo(home.workspace);
      const config = join(ws, '.git', 'config');
      const before = readFileSync(config, 'utf8');
      const ux = await mcpSession(home, args);
      // The door applies patches in this workspace: a plain one goes through without a question.
      expect(await ux.exec(applyPatchCommand('*** Add File: notes.txt\n+hello\n'))).toContain('A notes.txt');
      expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('hello\n');

      const canary = join(canaries, 'attack');
      const result = await ux.exec(
        applyPatchCommand(
          `*** Update File: .git/config\n@@\n [core]\n+\tfsmonitor = "${fsmonitor(canary)}"\n`,
        ),
      );
      expect(result).toMatch(/protected/);
      expect(readFileSync(config, 'utf8')).toBe(before);
      hostGit(ws, ['status']);
      expect(canariesIn(canaries), `the host git ran what the patch planted:\n${result}`).toEqual([
        'control',
      ]);
    },
    LONG,
  );

  it.each(NESTED_WORKSPACES)(
    '$name: pre-commit.sample moved to pre-commit is refused; no executable hook appears',
    async (layout) => {
      const canaries = canaryDir();
      const hookBody = (canary: string) => `@@\n #!/bin/sh\n+touch ${canary}; exit 0\n`;
      // Control: the sample is executable, so the move would make a hook the host's git commit runs.
      const control = initRepo(join(varTmpDir('ux-tb-control-'), 'repo'));
      const sample = join(control, '.git', 'hooks', 'pre-commit.sample');
      expect(statSync(sample).mode & 0o111, 'the sample hook is executable').not.toBe(0);
      const hook = join(control, '.git', 'hooks', 'pre-commit');
      copyFileSync(sample, hook);
      writeFileSync(hook, `#!/bin/sh\ntouch ${join(canaries, 'control')}; exit 0\n`);
      hostGit(control, ['commit', '-q', '--allow-empty', '-m', 'second']);
      expect(canariesIn(canaries), 'the host git commit ran the hook').toEqual(['control']);

      const { home, args } = await layout.make();
      const ws = initRepo(home.workspace);
      const hooks = join(ws, '.git', 'hooks');
      const sampleBefore = readFileSync(join(hooks, 'pre-commit.sample'), 'utf8');
      const ux = await mcpSession(home, args);
      const result = await ux.exec(
        applyPatchCommand(
          `*** Update File: .git/hooks/pre-commit.sample\n*** Move to: .git/hooks/pre-commit\n${hookBody(join(canaries, 'attack'))}`,
        ),
      );
      expect(result).toMatch(/protected/);
      expect(existsSync(join(hooks, 'pre-commit'))).toBe(false);
      expect(readFileSync(join(hooks, 'pre-commit.sample'), 'utf8')).toBe(sampleBefore);
      hostGit(ws, ['commit', '-q', '--allow-empty', '-m', 'second']);
      expect(canariesIn(canaries)).toEqual(['control']);
    },
    LONG,
  );

  it.each(NESTED_WORKSPACES)(
    '$name: new .git/commondir, .ux/x and .codex/config.toml are refused and not created',
    async (layout) => {
      const canaries = canaryDir();
      // Control: a .git/commondir the host's git follows runs the configuration of the repository it
      // names.
      const control = initRepo(join(varTmpDir('ux-tb-control-'), 'repo'));
      const evil = initRepo(join(dirname(control), 'evil'));
      hostGit(evil, ['config', 'core.fsmonitor', fsmonitor(join(canaries, 'control'))]);
      writeFileSync(join(control, '.git', 'commondir'), `${join(evil, '.git')}\n`);
      hostGit(control, ['status']);
      expect(canariesIn(canaries), 'the host git followed the planted commondir').toEqual(['control']);

      const { home, args } = await layout.make();
      const ws = initRepo(home.workspace);
      const ux = await mcpSession(home, args);
      expect(await ux.exec(applyPatchCommand('*** Add File: .uxnotes/x\n+fine\n'))).toContain('A .uxnotes/x');
      const evilHere = initRepo(join(dirname(ws), 'evil-here'));
      hostGit(evilHere, ['config', 'core.fsmonitor', fsmonitor(join(canaries, 'attack'))]);
      const planted = {
        '.git/commondir': `${join(evilHere, '.git')}`,
        '.ux/x': 'agent instructions',
        '.codex/config.toml': '[mcp_servers.evil]\ncommand = "touch"',
      };
      for (const [name, text] of Object.entries(planted)) {
        const result = await ux.exec(
          applyPatchCommand(`*** Add File: ${name}\n+${text.replaceAll('\n', '\n+')}\n`),
        );
        expect.soft(result, name).toMatch(/protected/);
        expect.soft(existsSync(join(ws, name)), `${name} exists after the patch`).toBe(false);
      }
      hostGit(ws, ['status']);
      expect(canariesIn(canaries)).toEqual(['control']);
    },
    LONG,
  );

  it.each(ANCESTOR_LAYOUTS)(
    '$name: apply_patch cannot plant a repository between the writable root and the workspace (found while attacking)',
    async (layout) => {
      const canaries = canaryDir();
      // Control: a repository there, made on the host, takes over git in the workspace.
      const control = await layout.make();
      initRepo(control.ancestor);
      hostGit(control.ancestor, ['config', 'core.fsmonitor', fsmonitor(join(canaries, 'control'))]);
      hostGit(control.home.workspace, ['status']);
      expect(canariesIn(canaries), "the host git in the workspace ran the ancestor's fsmonitor").toEqual([
        'control',
      ]);

      const { home, args, ancestor } = await layout.make();
      const ux = await mcpSession(home, args);
      // The door writes there without a question: it is inside a writable root.
      expect(await ux.exec(applyPatchCommand('*** Add File: ../notes.txt\n+fine\n'))).toContain(
        'A ../notes.txt',
      );
      expect(readFileSync(join(ancestor, 'notes.txt'), 'utf8')).toBe('fine\n');
      const result = await ux.exec(applyPatchCommand(repositoryPatch('..', join(canaries, 'attack'))));
      hostGit(home.workspace, ['status']);
      expect(
        canariesIn(canaries),
        `the host git in the workspace ran what the patch planted:\n${result}`,
      ).toEqual(['control']);
      expect(existsSync(join(ancestor, '.git', 'config')), result).toBe(false);
    },
    LONG,
  );

  it(
    'a sandboxed process racing the door (a directory swapped with a link) gets no file written outside every writable root',
    async () => {
      const { home, args } = await NESTED_WORKSPACES[0]!.make();
      initRepo(home.workspace);
      const victim = varTmpDir('ux-tb-victim-');
      writeFileSync(join(victim, 'notes'), 'original\n');
      const ux = await mcpSession(home, args);
      // Controls: the sandbox itself cannot write the victim, and the door applies patches into d.
      const direct = await ux.exec(
        `mkdir d && ln -s ${sh(victim)} lnk && { echo x > ${sh(join(victim, 'notes'))}; } 2>&1; echo "direct=$?"`,
      );
      expect(direct).toMatch(/direct=1/);
      expect(await ux.exec(applyPatchCommand('*** Add File: d/first\n+fine\n'))).toContain('A d/first');
      expect(readFileSync(join(home.workspace, 'd', 'first'), 'utf8')).toBe('fine\n');

      // renameat2(RENAME_EXCHANGE) in a loop: `d` is a directory one moment, a link to the victim the next.
      const renameat2 = process.arch === 'arm64' ? 276 : 316;
      const swapper = await ux.exec(
        `perl -e 'my ($a, $b) = ("d", "lnk"); while (1) { syscall(${renameat2}, -100, $a, -100, $b, 2) == 0 or die "renameat2: $!" }'`,
        300,
      );
      expect(swapper).toMatch(/Process running with session ID/);
      const kinds = new Set<string>();
      for (let i = 0; i < 20_000 && kinds.size < 2; i++) {
        try {
          kinds.add(lstatSync(join(home.workspace, 'd')).isSymbolicLink() ? 'link' : 'dir');
        } catch {
          // Between two renames of another kind of swap; this one is atomic.
        }
      }
      expect([...kinds].sort(), 'the swap runs').toEqual(['dir', 'link']);

      const results: string[] = [];
      for (let attempt = 0; attempt < 60; attempt++) {
        results.push(await ux.exec(applyPatchCommand(`*** Add File: d/planted-${attempt}\n+planted\n`)));
        if (readdirSync(victim).length > 1) break;
      }
      expect(
        readdirSync(victim),
        `the door wrote outside every writable root after ${results.length} patches; the last said:\n${results.at(-1)}`,
      ).toEqual(['notes']);
      expect(readFileSync(join(victim, 'notes'), 'utf8')).toBe('original\n');
    },
    LONG,
  );
});

// ---------------------------------------------------------------------------------------------------
// Item 4: ux's own state (UX_HOME, the requirements file, snapshots) under a writable root.

interface StateLayout extends Layout {
  name: string;
  /** A directory inside a writable root where the requirements file is (or would be). */
  writableDir: string;
}

const STATE_LAYOUTS: { name: string; make(env?: 'no UX_HOME'): Promise<StateLayout> }[] = [
  {
    name: 'UX_HOME and HOME inside a --writable-root parent',
    make: async (env) => {
      const base = varTmpDir('ux-tb-');
      const parent = join(base, 'parent');
      const writableDir = join(parent, 'policy');
      mkdirSync(writableDir, { recursive: true });
      const home = uxHomeAt({
        workspace: join(parent, 'ws'),
        uxHome: env === 'no UX_HOME' ? undefined : join(parent, 'ux-home'),
        home: join(parent, 'home'),
        requirements: join(writableDir, 'requirements.toml'),
      });
      return { name: 'writable-root', home, args: ['--writable-root', parent], writableDir };
    },
  },
  {
    name: 'UX_HOME and HOME under /tmp with private_tmp = false',
    make: async (env) => {
      const tmp = slashTmpDir('ux-tb-');
      const writableDir = join(tmp, 'policy');
      mkdirSync(writableDir, { recursive: true });
      const home = uxHomeAt({
        workspace: join(varTmpDir('ux-tb-'), 'ws'),
        uxHome: env === 'no UX_HOME' ? undefined : join(tmp, 'ux-home'),
        home: join(tmp, 'home'),
        requirements: join(writableDir, 'requirements.toml'),
      });
      return { name: 'tmp', home, args: await privateTmpOff(), writableDir };
    },
  },
];

interface StateAttack {
  name: string;
  env?: 'no UX_HOME';
  /** Host-side set-up: what exists before the command. */
  prepare?(layout: StateLayout): void;
  /** The sandboxed command; `canary` is where host code would leave its mark. */
  script(layout: StateLayout, canary: string): string;
}

const ALLOW_TOUCH = 'prefix_rule(pattern=["touch"], decision="allow")';
const STATE_ATTACKS: StateAttack[] = [
  {
    name: 'an allow rule in a new $UX_HOME/rules/evil.rules',
    script: () => `mkdir -p "$UX_HOME/rules" && echo ${sh(ALLOW_TOUCH)} > "$UX_HOME/rules/evil.rules"`,
  },
  {
    name: 'an allow rule over an existing $UX_HOME/rules/default.rules',
    prepare: ({ home }) => {
      mkdirSync(join(home.home, 'rules'), { recursive: true });
      writeFileSync(
        join(home.home, 'rules', 'default.rules'),
        'prefix_rule(pattern=["git", "log"], decision="allow")\n',
      );
    },
    script: () => `echo ${sh(ALLOW_TOUCH)} > "$UX_HOME/rules/default.rules"`,
  },
  {
    name: 'sandbox_mode = "danger-full-access" in a new config.toml',
    script: () => `echo 'sandbox_mode = "danger-full-access"' > "$UX_HOME/config.toml"`,
  },
  {
    name: 'sandbox_mode = "danger-full-access" over an existing config.toml',
    prepare: ({ home }) => writeFileSync(home.config, '# my settings\n'),
    script: () => `echo 'sandbox_mode = "danger-full-access"' > "$UX_HOME/config.toml"`,
  },
  {
    name: 'bwrap_path naming a program the command wrote',
    script: ({ home }, canary) =>
      [
        `printf '#!/bin/sh\\ntouch ${canary}\\nexec bwrap "$@"\\n' > ${sh(join(home.workspace, 'evil-bwrap'))}`,
        `chmod +x ${sh(join(home.workspace, 'evil-bwrap'))}`,
        `echo 'bwrap_path = "${join(home.workspace, 'evil-bwrap')}"' > "$UX_HOME/config.toml"`,
      ].join(' && '),
  },
  {
    name: 'sandbox_plugins naming a module the command wrote',
    script: ({ home }, canary) =>
      [
        `printf '%s\\n' ${sh(`require("node:fs").writeFileSync(${JSON.stringify(canary)}, "x");`)} > ${sh(join(home.workspace, 'evil-plugin.cjs'))}`,
        `echo ${sh(`sandbox_plugins = ["${join(home.workspace, 'evil-plugin.cjs')}"]`)} > "$UX_HOME/config.toml"`,
      ].join(' && '),
  },
  {
    name: 'a requirements file the command creates (UX_REQUIREMENTS inside a writable root)',
    script: () => `echo 'allowed_sandbox_modes = ["danger-full-access"]' > "$UX_REQUIREMENTS"`,
  },
  {
    name: 'an existing requirements file inside a writable root, rewritten',
    prepare: ({ home }) => writeFileSync(home.requirements, '# managed by the administrator\n'),
    script: () => `echo 'allowed_sandbox_modes = ["danger-full-access"]' > "$UX_REQUIREMENTS"`,
  },
  {
    name: 'an allow rule in ~/.ux/rules (UX_HOME unset, HOME inside a writable root)',
    env: 'no UX_HOME',
    script: () => `mkdir -p "$HOME/.ux/rules" && echo ${sh(ALLOW_TOUCH)} > "$HOME/.ux/rules/evil.rules"`,
  },
];

describe("item 4: ux's own state under a writable root", () => {
  const cases = STATE_LAYOUTS.flatMap((layout) => STATE_ATTACKS.map((attack) => ({ layout, attack })));
  it.each(cases)(
    '$layout.name: $attack.name; the next --approval never command still runs sandboxed',
    async ({ layout, attack }) => {
      const canaries = canaryDir();
      const run = async (mode: 'control' | 'attack', extra: string[]) => {
        const state = await layout.make(attack.env);
        attack.prepare?.(state);
        // ux made its state before the command runs (UX_HOME, bin, cache, snapshots).
        expect((await uxExec(state.home, state.args, 'true')).status).toBe(0);
        const canary = join(canaries, mode);
        const attempt = await uxExec(state.home, [...state.args, ...extra], attack.script(state, canary));
        const next = await uxExec(state.home, state.args, `touch ${sh(canary)}`);
        return { attempt, next, canary };
      };
      // Control: the same writes done outside the sandbox change what ux does next.
      const control = await run('control', ['--sandbox', 'danger-full-access']);
      expect(
        existsSync(control.canary),
        `control: the planted state changed nothing:\n${control.next.stdout}`,
      ).toBe(true);

      const attack_ = await run('attack', []);
      expect(
        existsSync(attack_.canary),
        `the command's write made the next command run outside the sandbox:\n${attack_.attempt.stdout}\n---\n${attack_.next.stdout}`,
      ).toBe(false);
    },
    LONG,
  );

  it.each(STATE_LAYOUTS)(
    '$name: the shell snapshot and UX_HOME/bin a later escalated command uses cannot be rewritten (ux mcp, one session)',
    async (layout) => {
      const run = async (extra: string[]) => {
        const canaries = canaryDir();
        const state = await layout.make();
        initRepo(state.home.workspace);
        // What a person approved with [p] earlier: git status runs outside the sandbox.
        mkdirSync(join(state.home.home, 'rules'), { recursive: true });
        writeFileSync(
          join(state.home.home, 'rules', 'default.rules'),
          'prefix_rule(pattern=["git", "status"], decision="allow")\n',
        );
        const ux = await mcpSession(state.home, [...state.args, '--approval', 'never', ...extra]);
        // The snapshot every command sources (named on its own command line) and the directory ux puts
        // first on every command's PATH.
        const planted = await ux.exec(
          [
            `for f in $({ ls -d "$UX_HOME"/shell-snapshots/* 2>/dev/null; grep -ao "/[^'\\"]*snapshot[^'\\"]*" /proc/$$/cmdline; } | sort -u); do`,
            `  [ -f "$f" ] && { printf '\\ntouch ${canaries}/snapshot\\n' >> "$f" && echo "appended $f" || echo "refused $f"; }`,
            'done',
            `printf '#!/bin/sh\\ntouch ${canaries}/bin-git\\nexec /usr/bin/git "$@"\\n' > "$UX_HOME/bin/git" && chmod +x "$UX_HOME/bin/git" && echo "planted $UX_HOME/bin/git"`,
            'true',
          ].join('\n'),
        );
        const escalated = await ux.exec('git status');
        return { planted, escalated, canaries };
      };
      const control = await run(['--sandbox', 'danger-full-access']);
      expect(control.planted).toMatch(/appended /);
      expect(canariesIn(control.canaries), 'control: the next command ran what was planted').toEqual([
        'bin-git',
        'snapshot',
      ]);

      const attack = await run([]);
      expect(
        canariesIn(attack.canaries),
        `git status (allowed by a rule) ran what the sandbox planted:\n${attack.planted}\n---\n${attack.escalated}`,
      ).toEqual([]);
    },
    LONG,
  );

  it.each(STATE_LAYOUTS)(
    "$name: every write into ux's state (rules, config, requirements, snapshots, cache, bin) fails or is taken away",
    async (layout) => {
      const mark = uniqueMarker();
      const targets = (state: StateLayout) => [
        join(state.home.home, 'rules', 'evil.rules'),
        join(state.home.home, 'config.toml'),
        state.home.requirements,
        join(state.home.home, 'shell-snapshots', 'evil.sh'),
        join(state.home.home, 'cache', 'evil'),
        join(state.home.home, 'bin', 'apply_patch'),
        join(state.home.home, 'bin', 'git'),
      ];
      const script = (state: StateLayout) =>
        `${targets(state)
          .map((path) => `{ mkdir -p ${sh(dirname(path))}; echo ${mark} > ${sh(path)}; } 2>/dev/null`)
          .join('\n')}\nsleep 0.2; true`;
      const written = (state: StateLayout) =>
        targets(state).filter((path) => existsSync(path) && readFileSync(path, 'utf8').includes(mark));

      const control = await layout.make();
      expect((await uxExec(control.home, control.args, 'true')).status).toBe(0);
      await uxExec(control.home, [...control.args, '--sandbox', 'danger-full-access'], script(control));
      expect(written(control), 'control: the writes land outside the sandbox').toEqual(targets(control));

      const state = await layout.make();
      expect((await uxExec(state.home, state.args, 'true')).status).toBe(0);
      const attempt = await uxExec(state.home, state.args, script(state));
      expect(written(state), attempt.stdout).toEqual([]);
    },
    LONG,
  );
});

// ---------------------------------------------------------------------------------------------------
// Item 6: nested repositories, and repositories in the host's /tmp.

/** A workspace repository holding a nested repository, a submodule, a repository with its git
 * directory elsewhere (a `.git` file) and one whose `.git` the command will try to replace. */
function nestedRepositories(root: string): string {
  const ws = initRepo(join(root, 'ws'));
  initRepo(join(ws, 'vendor', 'lib'));
  initRepo(join(ws, 'vendor', 'lib2'));
  const source = initRepo(join(root, 'sm-source'));
  hostGit(ws, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', source, 'vendor/sm']);
  initRepo(join(ws, 'vendor', 'ext'), { separateGitDir: join(ws, 'vendor', '.ext-git') });
  expect(readFileSync(join(ws, 'vendor', 'sm', '.git'), 'utf8')).toMatch(/^gitdir: /);
  expect(readFileSync(join(ws, 'vendor', 'ext', '.git'), 'utf8')).toMatch(/^gitdir: /);
  return ws;
}

function nestedRepositoryAttack(c: string): string {
  return [
    `git -C vendor/lib config core.fsmonitor ${sh(fsmonitor(`${c}/lib-fsmonitor`))}`,
    `printf '#!/bin/sh\\ntouch ${c}/lib-post-checkout\\n' > vendor/lib/.git/hooks/post-checkout && chmod +x vendor/lib/.git/hooks/post-checkout`,
    `git -C vendor/sm config core.fsmonitor ${sh(fsmonitor(`${c}/sm-fsmonitor`))}`,
    `git -C vendor/ext config core.fsmonitor ${sh(fsmonitor(`${c}/ext-fsmonitor`))}`,
    `{ mv vendor/lib2/.git vendor/lib2/.git-old && git init -q vendor/lib2 && git -C vendor/lib2 config core.fsmonitor ${sh(fsmonitor(`${c}/lib2-replaced`))}; }`,
    'sleep 0.2; true',
  ].join('\n');
}

function hostGitAfterwards(ws: string): void {
  hostGit(join(ws, 'vendor', 'lib'), ['status']);
  hostGit(join(ws, 'vendor', 'lib'), ['checkout', '-q', '-b', 'tb-next']);
  hostGit(join(ws, 'vendor', 'sm'), ['status']);
  hostGit(join(ws, 'vendor', 'ext'), ['status']);
  hostGit(join(ws, 'vendor', 'lib2'), ['status']);
}

const NESTED_CANARIES = [
  'ext-fsmonitor',
  'lib-fsmonitor',
  'lib-post-checkout',
  'lib2-replaced',
  'sm-fsmonitor',
];

describe('item 6: nested repositories', () => {
  it(
    'vendor/lib, a submodule, a .git file and a replaced .git: the host git afterwards runs nothing the command planted',
    async () => {
      const controlCanaries = canaryDir();
      const control = nestedRepositories(varTmpDir('ux-tb-'));
      const controlHome = uxHomeAt({
        workspace: control,
        uxHome: varTmpDir('ux-tb-home-'),
        home: varTmpDir('ux-tb-home-'),
        requirements: '/nonexistent/requirements.toml',
      });
      await uxExec(controlHome, ['--sandbox', 'danger-full-access'], nestedRepositoryAttack(controlCanaries));
      hostGitAfterwards(control);
      expect(canariesIn(controlCanaries), 'control: every planted program runs').toEqual(NESTED_CANARIES);

      const canaries = canaryDir();
      const ws = nestedRepositories(varTmpDir('ux-tb-'));
      const uxHome = varTmpDir('ux-tb-home-');
      const home = uxHomeAt({
        workspace: ws,
        uxHome,
        home: uxHome,
        requirements: '/nonexistent/requirements.toml',
      });
      const attempt = await uxExec(home, [], nestedRepositoryAttack(canaries));
      hostGitAfterwards(ws);
      expect(canariesIn(canaries), `the host git ran what the command planted:\n${attempt.stdout}`).toEqual(
        [],
      );
    },
    LONG,
  );

  it(
    "a repository in the host's /tmp outside the workspace: the default sandbox cannot see or change it",
    async () => {
      const script = (repo: string, c: string) =>
        [
          `ls -A ${sh(repo)} >/dev/null 2>&1 && echo VISIBLE`,
          `git -C ${sh(repo)} config core.fsmonitor ${sh(fsmonitor(`${c}/tmp-fsmonitor`))} 2>/dev/null && echo CONFIGURED`,
          `{ printf '#!/bin/sh\\ntouch ${c}/tmp-post-checkout\\n' > ${sh(`${repo}/.git/hooks/post-checkout`)} && chmod +x ${sh(`${repo}/.git/hooks/post-checkout`)}; } 2>/dev/null && echo HOOKED`,
          'true',
        ].join('\n');
      const gitAfterwards = (repo: string) => {
        hostGit(repo, ['status']);
        hostGit(repo, ['checkout', '-q', '-b', 'tb-next']);
      };
      const uxHome = varTmpDir('ux-tb-home-');
      const home = uxHomeAt({
        workspace: join(varTmpDir('ux-tb-'), 'ws'),
        uxHome,
        home: uxHome,
        requirements: '/nonexistent/requirements.toml',
      });

      const controlCanaries = canaryDir();
      const controlRepo = initRepo(join(slashTmpDir('ux-tb-repo-'), 'repo'));
      const control = await uxExec(
        home,
        ['--sandbox', 'danger-full-access'],
        script(controlRepo, controlCanaries),
      );
      gitAfterwards(controlRepo);
      expect(control.output).toMatch(/VISIBLE\nCONFIGURED\nHOOKED/);
      expect(canariesIn(controlCanaries)).toEqual(['tmp-fsmonitor', 'tmp-post-checkout']);

      const canaries = canaryDir();
      const repo = initRepo(join(slashTmpDir('ux-tb-repo-'), 'repo'));
      const attempt = await uxExec(home, [], script(repo, canaries));
      gitAfterwards(repo);
      expect(attempt.output).not.toMatch(/VISIBLE|CONFIGURED|HOOKED/);
      expect(canariesIn(canaries)).toEqual([]);
    },
    LONG,
  );

  it.each(ANCESTOR_LAYOUTS)(
    '$name: a repository the command makes between the writable root and the workspace runs nothing in the host git (found while attacking)',
    async (layout) => {
      const script = (c: string) =>
        `git init -q .. && git -C .. config core.fsmonitor ${sh(fsmonitor(`${c}/ancestor`))}; sleep 0.2; true`;
      const controlCanaries = canaryDir();
      const control = await layout.make();
      await uxExec(
        control.home,
        [...control.args, '--sandbox', 'danger-full-access'],
        script(controlCanaries),
      );
      hostGit(control.home.workspace, ['status']);
      expect(canariesIn(controlCanaries), 'control: git in the workspace finds the new repository').toEqual([
        'ancestor',
      ]);

      const canaries = canaryDir();
      const { home, args } = await layout.make();
      const attempt = await uxExec(home, args, script(canaries));
      hostGit(home.workspace, ['status']);
      expect(
        canariesIn(canaries),
        `the host git in the workspace ran what the command planted:\n${attempt.stdout}`,
      ).toEqual([]);
    },
    LONG,
  );

  it(
    'hooks under a configured core.hooksPath (husky) and a file named by include.path stay out of reach (found while attacking)',
    async () => {
      const repository = (root: string) => {
        const ws = initRepo(join(root, 'ws'));
        mkdirSync(join(ws, '.husky'));
        writeFileSync(join(ws, '.husky', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
        hostGit(ws, ['config', 'core.hooksPath', '.husky']);
        writeFileSync(join(ws, '.gitconfig-project'), '[user]\n\tname = project\n');
        hostGit(ws, ['config', 'include.path', '../.gitconfig-project']);
        return ws;
      };
      const script = (c: string) =>
        [
          `printf '#!/bin/sh\\ntouch ${c}/husky-pre-commit\\n' > .husky/pre-commit`,
          `printf '[core]\\n\\tfsmonitor = "${fsmonitor(`${c}/include-fsmonitor`)}"\\n' >> .gitconfig-project`,
          'sleep 0.2; true',
        ].join('\n');
      const afterwards = (ws: string) => {
        hostGit(ws, ['status']);
        hostGit(ws, ['commit', '-q', '--allow-empty', '-m', 'next']);
      };
      const place = (ws: string) => {
        const uxHome = varTmpDir('ux-tb-home-');
        return uxHomeAt({
          workspace: ws,
          uxHome,
          home: uxHome,
          requirements: '/nonexistent/requirements.toml',
        });
      };

      const controlCanaries = canaryDir();
      const control = repository(varTmpDir('ux-tb-'));
      await uxExec(place(control), ['--sandbox', 'danger-full-access'], script(controlCanaries));
      afterwards(control);
      expect(canariesIn(controlCanaries), 'control: the host git runs both').toEqual([
        'husky-pre-commit',
        'include-fsmonitor',
      ]);

      const canaries = canaryDir();
      const ws = repository(varTmpDir('ux-tb-'));
      const attempt = await uxExec(place(ws), [], script(canaries));
      afterwards(ws);
      expect(canariesIn(canaries), `the host git ran what the command planted:\n${attempt.stdout}`).toEqual(
        [],
      );
    },
    LONG,
  );
});

// ---------------------------------------------------------------------------------------------------
// Item 7: a home directory inside a writable root.

interface HomeLayout {
  name: string;
  /** Which directories a stock home has here beyond /etc/skel. */
  extraDirs: string[];
  make(base: string): { home: string; layout: Layout };
}

const HOME_LAYOUTS: HomeLayout[] = [
  {
    name: 'HOME is the workspace (a Debian home with .local, .config and .cargo/bin)',
    extraDirs: ['.local', '.config', '.cargo/bin'],
    make: (base) => {
      const home = join(base, 'home');
      return {
        home,
        layout: {
          home: uxHomeAt({
            workspace: home,
            uxHome: join(base, 'ux-home'),
            home,
            requirements: join(base, 'requirements.toml'),
          }),
          args: [],
        },
      };
    },
  },
  {
    name: 'HOME inside a --writable-root parent (a Debian home with .local, .config and .cargo/bin)',
    extraDirs: ['.local', '.config', '.cargo/bin'],
    make: (base) => {
      const home = join(base, 'parent', 'home');
      return {
        home,
        layout: {
          home: uxHomeAt({
            workspace: join(base, 'parent', 'ws'),
            uxHome: join(base, 'ux-home'),
            home,
            requirements: join(base, 'requirements.toml'),
          }),
          args: ['--writable-root', join(base, 'parent')],
        },
      };
    },
  },
  {
    name: 'HOME is the workspace, fresh from /etc/skel (no .local, no .config)',
    extraDirs: [],
    make: (base) => {
      const home = join(base, 'home');
      return {
        home,
        layout: {
          home: uxHomeAt({
            workspace: home,
            uxHome: join(base, 'ux-home'),
            home,
            requirements: join(base, 'requirements.toml'),
          }),
          args: [],
        },
      };
    },
  },
];

/** Files a command plants in the home, and the canary each leaves when the host runs it (if any). */
function homePlants(home: string, workspace: string, c: string, extraDirs: string[]) {
  const evilShell = join(workspace, '.tb-evil-sh');
  return [
    { path: '.bash_aliases', text: `touch ${c}/bash_aliases\n`, canary: 'bash_aliases' },
    { path: '.bashrc', text: `touch ${c}/bashrc\n`, canary: 'bashrc', append: true },
    {
      path: '.local/bin/ls',
      text: `#!/bin/sh\ntouch ${c}/local_bin_ls\nexec /bin/ls "$@"\n`,
      canary: 'local_bin_ls',
      executable: true,
    },
    {
      path: '.config/git/config',
      text: `[core]\n\tfsmonitor = "${fsmonitor(`${c}/git_config`)}"\n`,
      canary: 'git_config',
    },
    { path: '.npmrc', text: `script-shell=${evilShell}\n`, canary: 'npmrc' },
    { path: '.vimrc', text: `call writefile([], "${c}/vimrc")\n`, canary: 'vimrc' },
    { path: '.config/systemd/user/x.service', text: `[Service]\nExecStart=/bin/touch ${c}/systemd\n` },
    { path: '.config/autostart/x.desktop', text: `[Desktop Entry]\nExec=/bin/touch ${c}/autostart\n` },
    // On PATH through ~/.cargo/env, which only a home with a cargo installation sources.
    ...(extraDirs.includes('.cargo/bin')
      ? [{ path: '.cargo/bin/x', text: `#!/bin/sh\ntouch ${c}/cargo\n`, executable: true }]
      : []),
    { path: '.config/fish/conf.d/x.fish', text: `touch ${c}/fish\n` },
  ].map((plant) => ({ ...plant, full: join(home, plant.path), evilShell }));
}

function homeAttackScript(plants: ReturnType<typeof homePlants>, c: string): string {
  const lines = [
    `printf '#!/bin/sh\\ntouch ${c}/npmrc\\nexec /bin/sh "$@"\\n' > ${sh(plants[0]!.evilShell)} && chmod +x ${sh(plants[0]!.evilShell)}`,
  ];
  for (const plant of plants) {
    const redirect = plant.append ? '>>' : '>';
    lines.push(
      `{ mkdir -p ${sh(dirname(plant.full))} && printf '%s' ${sh(plant.text)} ${redirect} ${sh(plant.full)}${plant.executable ? ` && chmod +x ${sh(plant.full)}` : ''} && echo "planted ${plant.path}"; } 2>/dev/null`,
    );
  }
  lines.push('sleep 0.2; true');
  return lines.join('\n');
}

describe('item 7: a home inside a writable root', () => {
  it.each(HOME_LAYOUTS)(
    '$name: login files, PATH programs and tool configuration the command plants do not run on the host',
    async (homeLayout) => {
      const prepare = () => {
        const base = varTmpDir('ux-tb-');
        const made = homeLayout.make(base);
        cpSync('/etc/skel', made.home, { recursive: true });
        for (const dir of homeLayout.extraDirs) mkdirSync(join(made.home, dir), { recursive: true });
        const repo = initRepo(join(base, 'host-repo'));
        const npmPackage = join(base, 'pkg');
        mkdirSync(npmPackage);
        writeFileSync(
          join(npmPackage, 'package.json'),
          JSON.stringify({ name: 'p', version: '1.0.0', scripts: { x: 'true' } }),
        );
        return { ...made, repo, npmPackage };
      };

      // Control: the same files, written outside the sandbox, run when the person next logs in, runs
      // git, npm or vim.
      const controlCanaries = canaryDir();
      const control = prepare();
      const controlPlants = homePlants(
        control.home,
        control.layout.home.workspace,
        controlCanaries,
        homeLayout.extraDirs,
      );
      const wrote = await uxExec(
        control.layout.home,
        [...control.layout.args, '--sandbox', 'danger-full-access'],
        homeAttackScript(controlPlants, controlCanaries),
      );
      expect(wrote.output.match(/^planted /gm)?.length, wrote.output).toBe(controlPlants.length);
      hostSession(control.home, control);
      const triggered = controlPlants.flatMap((plant) => (plant.canary ? [plant.canary] : [])).sort();
      expect(canariesIn(controlCanaries), 'control: what a person runs next runs the planted code').toEqual(
        triggered,
      );

      const canaries = canaryDir();
      const target = prepare();
      const plants = homePlants(target.home, target.layout.home.workspace, canaries, homeLayout.extraDirs);
      const bashrc = readFileSync(join(target.home, '.bashrc'), 'utf8');
      const attempt = await uxExec(
        target.layout.home,
        target.layout.args,
        homeAttackScript(plants, canaries),
      );
      for (const plant of plants) {
        if (plant.append) expect.soft(readFileSync(plant.full, 'utf8'), plant.path).toBe(bashrc);
        else expect.soft(existsSync(plant.full), `${plant.path} was planted`).toBe(false);
      }
      const { login } = hostSession(target.home, target);
      expect(
        canariesIn(canaries),
        `the host ran what the command planted:\n${attempt.stdout}\n--- login shell:\n${login.stderr}`,
      ).toEqual([]);
    },
    LONG,
  );

  it(
    'a dotfile that is a link (stow-style ~/.bashrc and ~/.gitconfig) cannot be swapped for a file (found while attacking)',
    async () => {
      const prepare = () => {
        const base = varTmpDir('ux-tb-');
        const home = join(base, 'home');
        mkdirSync(join(home, 'dotfiles'), { recursive: true });
        copyFileSync('/etc/skel/.profile', join(home, '.profile'));
        copyFileSync('/etc/skel/.bashrc', join(home, 'dotfiles', 'bashrc'));
        writeFileSync(join(home, 'dotfiles', 'gitconfig'), '[user]\n\tname = me\n');
        symlinkSync('dotfiles/bashrc', join(home, '.bashrc'));
        symlinkSync('dotfiles/gitconfig', join(home, '.gitconfig'));
        const layout = uxHomeAt({
          workspace: home,
          uxHome: join(base, 'ux-home'),
          home,
          requirements: join(base, 'requirements.toml'),
        });
        return { home, layout, repo: initRepo(join(base, 'host-repo')) };
      };
      const script = (c: string) =>
        [
          `mv .bashrc .bashrc-moved && printf 'touch ${c}/bashrc\\n' > .bashrc`,
          `mv .gitconfig .gitconfig-moved && printf '[core]\\n\\tfsmonitor = "${fsmonitor(`${c}/gitconfig`)}"\\n' > .gitconfig`,
          'sleep 0.2; true',
        ].join('\n');
      const afterwards = (target: ReturnType<typeof prepare>) => {
        spawnSync('bash', ['-l', '-i', '-c', 'true'], {
          cwd: target.home,
          env: hostEnv(target.home),
          timeout: 20_000,
          stdio: 'ignore',
        });
        hostGit(target.repo, ['status'], target.home);
      };

      const controlCanaries = canaryDir();
      const control = prepare();
      await uxExec(control.layout, ['--sandbox', 'danger-full-access'], script(controlCanaries));
      afterwards(control);
      expect(canariesIn(controlCanaries), 'control: the login shell and git read the new files').toEqual([
        'bashrc',
        'gitconfig',
      ]);

      const canaries = canaryDir();
      const target = prepare();
      const attempt = await uxExec(target.layout, [], script(canaries));
      afterwards(target);
      expect(canariesIn(canaries), `the host ran what the command planted:\n${attempt.stdout}`).toEqual([]);
    },
    LONG,
  );
});

// ---------------------------------------------------------------------------------------------------
// Items 3 and 4 across processes: the runtime files of one ux process are out of reach of the
// commands of another.

const ATTACKER_SANDBOXES: { name: string; args: () => Promise<string[]> }[] = [
  { name: 'default sandbox', args: async () => [] },
  { name: 'private_tmp = false', args: privateTmpOff },
];

/** What a probe of `victims` reached, from inside (`probeFindings`) and on the host (files it left). */
function reached(output: string, victims: string[], mark: string): string[] {
  return [...probeFindings(output), ...probeFilesLeft(victims, mark).map((dir) => `WROTE A FILE IN ${dir}`)];
}

/** Probes `victims` without the sandbox first (the control), then with `attack`; returns what it reached. */
async function probeTwice(
  victims: string[],
  searchBpfIn: string[],
  control: (script: string) => Promise<string>,
  attack: (script: string) => Promise<string>,
) {
  const controlMark = uniqueMarker();
  onTestFinished(() => removeProbeFiles(victims, controlMark));
  const controlOutput = await control(probeScript(victims, controlMark, searchBpfIn));
  expect(controlOutput).toContain('PROBED');
  const controlReached = reached(controlOutput, victims, controlMark);
  removeProbeFiles(victims, controlMark);

  const hashes = new Map(victims.map((path) => [path, fileHash(path)]));
  const mark = uniqueMarker();
  onTestFinished(() => removeProbeFiles(victims, mark));
  const output = await attack(probeScript(victims, mark, searchBpfIn));
  expect(output).toContain('PROBED');
  const changed = [...hashes]
    .filter(([path, hash]) => fileHash(path) !== hash)
    .map(([path]) => `CHANGED ${path}`);
  return { controlReached, reached: [...reached(output, victims, mark), ...changed] };
}

describe("items 3 and 4 across processes: another ux process's runtime files", () => {
  it.each(ATTACKER_SANDBOXES)(
    '$name: a ux exec command cannot list, read, write or connect to what a running ux mcp keeps, and no seccomp program is a file',
    async (sandbox) => {
      const uxHome = varTmpDir('ux-tb-home-');
      const place = () =>
        uxHomeAt({
          workspace: join(varTmpDir('ux-tb-'), 'ws'),
          uxHome,
          home: uxHome,
          requirements: '/nonexistent/requirements.toml',
        });
      const mcp = await mcpSession(place(), ['--allow-domain', 'example.com']);
      const marker = uniqueMarker();
      expect(await mcp.exec(`echo ${marker}; sleep 60`, 500)).toMatch(/Process running with session ID/);
      const victims = runtimeFilesOf(mcp.pid, uxHome);
      expect(victims.length, 'the running ux mcp keeps runtime files').toBeGreaterThan(0);
      const searchIn = [...runtimeRootCandidates(), ...victims, uxHome, '/dev/shm'];

      const execHome = place();
      const attackArgs = await sandbox.args();
      const probe = await probeTwice(
        victims,
        searchIn,
        async (script) => (await uxExec(execHome, ['--sandbox', 'danger-full-access'], script)).output,
        async (script) => (await uxExec(execHome, attackArgs, script)).output,
      );
      expect(
        probe.controlReached.some((line) => line.startsWith('LIST ')),
        probe.controlReached.join('\n'),
      ).toBe(true);
      expect(probe.reached, `the other ux's runtime files:\n${victims.join('\n')}`).toEqual([]);
      expect(
        victims.filter((path) => path.endsWith('.bpf')),
        'seccomp programs kept as files',
      ).toEqual([]);
    },
    LONG,
  );

  it.each(ATTACKER_SANDBOXES)(
    '$name: a ux mcp command cannot list, read, write or connect to what a running ux exec keeps',
    async (sandbox) => {
      const uxHome = varTmpDir('ux-tb-home-');
      const place = () =>
        uxHomeAt({
          workspace: join(varTmpDir('ux-tb-'), 'ws'),
          uxHome,
          home: uxHome,
          requirements: '/nonexistent/requirements.toml',
        });
      const marker = uniqueMarker();
      const victim = await startBackgroundUxExec(
        place(),
        ['--allow-domain', 'example.com'],
        `echo ${marker}; sleep 60`,
        marker,
      );
      const victims = runtimeFilesOf(victim.pid, uxHome);
      expect(victims.length, 'the running ux exec keeps runtime files').toBeGreaterThan(0);
      const searchIn = [...runtimeRootCandidates(), ...victims, uxHome, '/dev/shm'];

      const mcpHome = place();
      const controlMcp = await mcpSession(mcpHome, [
        '--sandbox',
        'danger-full-access',
        '--approval',
        'never',
      ]);
      const mcp = await mcpSession(mcpHome, [...(await sandbox.args()), '--approval', 'never']);
      const probe = await probeTwice(
        victims,
        searchIn,
        (script) => controlMcp.exec(script),
        (script) => mcp.exec(script),
      );
      expect(
        probe.controlReached.some((line) => line.startsWith('LIST ')),
        probe.controlReached.join('\n'),
      ).toBe(true);
      expect(probe.reached, `the other ux's runtime files:\n${victims.join('\n')}`).toEqual([]);
      expect(
        victims.filter((path) => path.endsWith('.bpf')),
        'seccomp programs kept as files',
      ).toEqual([]);
    },
    LONG,
  );
});
