import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const CANNOT_RUN = 'ux cannot run as configured here; see the fixes above.';

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1)!;
}

/** A rule file in `$UX_HOME/rules`, which every `ux exec` loads. */
function ruleFile(home: UxHome, name: string, text: string): string {
  mkdirSync(join(home.home, 'rules'), { recursive: true });
  const path = join(home.home, 'rules', name);
  writeFileSync(path, text);
  return path;
}

describe('ux doctor: what every ux exec would trip over', () => {
  it('lists every mistake of config.toml, the requirements and the rule files in one run, each at file:line', async () => {
    const home = makeHome({
      config: [
        'sandbox_mode = "read-onyl"',
        'approval_polcy = "never"',
        '[features]',
        'unified_exce = true',
        '[sandbox_workspace_write]',
        'network_acess = true',
        '[zsh_fork]',
        'zsh_path = "relative/zsh"',
        '',
      ].join('\n'),
      requirements: 'allowed_sandbox_modes = ["read-only", "nope"]\nfoo = 1\n',
    });
    const rules = ruleFile(
      home,
      'default.rules',
      'prefix_rule(pattern = ["rm"], decision = "alow")\nprefix_rul(pattern = ["ls"])\n',
    );
    const doctor = await runUx(['doctor'], home);
    const failures = doctor.stdout.split('\n').filter((line) => line.startsWith('fail'));
    expect(failures.map((line) => /^fail +(\S+) +(\S+?):(\d+):\d+: /.exec(line)?.slice(1))).toEqual([
      ['config', home.config, '1'],
      ['config', home.config, '2'],
      ['config', home.config, '4'],
      ['config', home.config, '6'],
      ['config', home.config, '8'],
      ['requirements', home.requirements, '1'],
      ['requirements', home.requirements, '2'],
      ['rules', rules, '1'],
      ['rules', rules, '2'],
    ]);
    expect(doctor.stdout).toContain('unknown key approval_polcy (did you mean "approval_policy"?)');
    expect(doctor.stdout).toContain('unknown function "prefix_rul" (did you mean "prefix_rule"?)');
    expect(lastLine(doctor.stdout)).toBe(CANNOT_RUN);
    expect(doctor.status).toBe(1);
    // ux exec stops at the first of them, which doctor listed.
    const exec = await runUx(['exec', '--', 'true'], home);
    expect(exec.status).toBe(1);
    expect(failures.some((line) => line.endsWith(exec.stderr.replace(/^ux: /, '').trimEnd()))).toBe(true);
    const json = JSON.parse((await runUx(['doctor', '--json'], home)).stdout);
    expect(JSON.stringify(json)).toContain('zsh_fork.zsh_path must be an absolute path');
  });

  it('reports a rule file that does not parse, with file:line and a fix, and exits 1 as ux exec does', async () => {
    const home = makeHome();
    const bad = ruleFile(home, 'bad.rules', 'prefix_rule(pattern = ["git"\n');
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(new RegExp(`^fail +rules +${bad}:2:1: .+$`, 'm'));
    expect(doctor.stdout).toContain(
      `fix: correct the rule at the position named, or move it out of ${home.home}/rules`,
    );
    expect(lastLine(doctor.stdout)).toBe(CANNOT_RUN);
    expect(doctor.status).toBe(1);
    // Doctor's reason is the one ux exec stops with.
    const exec = await runUx(['exec', '--', 'true'], home);
    expect(exec.status).toBe(1);
    const reason = /^fail +rules +(.+)$/m.exec(doctor.stdout)![1]!;
    expect(exec.stderr).toBe(`ux: ${reason}\n`);
  });

  it('reports a rule file the config names that does not exist', async () => {
    const home = makeHome({ config: 'rules = ["/missing.rules"]\n' });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(/^fail +rules +\/missing\.rules: cannot read the rule file: .*ENOENT/m);
    expect(doctor.stdout).toContain(
      `fix: create /missing.rules, or remove it from rules = […] at ${home.config}:1:1`,
    );
    expect(lastLine(doctor.stdout)).toBe(CANNOT_RUN);
    expect(doctor.status).toBe(1);
    expect((await runUx(['exec', '--', 'true'], home)).status).toBe(1);
  });

  it('names every good rule file it loaded', async () => {
    const home = makeHome();
    const good = ruleFile(
      home,
      'git.rules',
      'prefix_rule(pattern = ["git", "status"], decision = "allow")\n',
    );
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(new RegExp(`^ok +rules +1 rule file parsed: ${good}$`, 'm'));
    expect(doctor.status).toBe(0);
  });

  it('checks sandbox_backends against the backends ux knows, with a close match', async () => {
    const home = makeHome({ config: 'sandbox_backends = ["bwrp"]\n' });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^fail +sandbox_backends +${home.config}:1:1: unknown sandbox backend "bwrp" \\(did you mean "bwrap"\\?\\); ux knows bwrap, seatbelt, windows-token$`,
        'm',
      ),
    );
    expect(doctor.stdout).toContain(`fix: write sandbox_backends = ["bwrap"] at ${home.config}:1:1`);
    expect(doctor.stdout).not.toContain('(none registered)');
    expect(lastLine(doctor.stdout)).toBe(CANNOT_RUN);
    expect(doctor.status).toBe(1);
    // ux exec fails on it in every sandbox mode, and lists the same backends.
    for (const mode of ['workspace-write', 'danger-full-access']) {
      const exec = await runUx(['exec', '--sandbox', mode, '--', 'true'], home);
      expect(exec.status).toBe(1);
      expect(exec.stderr).toBe(
        'ux: unknown sandbox backend "bwrp" (did you mean "bwrap"?); available: bwrap, seatbelt, windows-token\n',
      );
    }
  });

  it('warns about a writable root that does not exist, and still says ux can run', async () => {
    const home = makeHome({ config: '[sandbox_workspace_write]\nwritable_roots = ["/no/such/root"]\n' });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      /^warn +writable root +\/no\/such\/root does not exist \(.*config\.toml:\d+:\d+\); commands cannot write there$/m,
    );
    expect(lastLine(doctor.stdout)).toBe('ux can run here; see the warnings above.');
    expect(doctor.status).toBe(0);
  });

  it('fails on zsh fork paths that do not exist when the zsh fork is in use, and only warns when not', async () => {
    const config =
      '[features]\nshell_zsh_fork = true\nunified_exec_zsh_fork = true\n[zsh_fork]\nzsh_path = "/no/zsh"\nexecve_wrapper_path = "/no/wrapper"\n';
    const home = makeHome({ config });
    const inUse = await runUx(['doctor'], home);
    expect(inUse.stdout).toMatch(
      /^fail +zsh_fork\.zsh_path +\/no\/zsh does not exist \(.*\); every command would fail to start$/m,
    );
    expect(inUse.stdout).toMatch(/^fail +zsh_fork\.execve_wrapper_path +\/no\/wrapper does not exist/m);
    expect(inUse.status).toBe(1);

    // The same paths with the fork off (no composition gate, and shell_zsh_fork off).
    const off = makeHome({
      config: config.replace('shell_zsh_fork = true\nunified_exec_zsh_fork = true', ''),
    });
    const unused = await runUx(['doctor'], off);
    expect(unused.stdout).toMatch(
      /^warn +zsh_fork\.zsh_path +\/no\/zsh does not exist \(.*\); the zsh fork is not in use now$/m,
    );
    expect(unused.status).toBe(0);
  });
});

describe('ux doctor: the bwrap fix names the config key', () => {
  it('says to set [sandbox.bwrap] path in config.toml, or to use Landlock, when bwrap is not on PATH', async () => {
    const home = makeHome();
    home.env.PATH = '/nonexistent';
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(/^fail +sandbox bwrap +bubblewrap \(bwrap\) was not found on PATH/m);
    expect(doctor.stdout).toContain(
      'fix: install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap), or set [sandbox.bwrap] path in config.toml to the absolute path of bwrap; or, where bubblewrap cannot run (no unprivileged user namespaces: AppArmor, containers, CI), use Landlock: add sandbox_plugins = ["@ux/sandbox-landlock"] to config.toml',
    );
    expect(doctor.stdout).not.toContain('bwrapPath');
    expect(doctor.status).toBe(1);
  });

  it('names [sandbox.bwrap] path when the configured one (here the deprecated bwrap_path) is not there', async () => {
    const home = makeHome({ config: 'bwrap_path = "/no/such/bwrap"\n' });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      /^fail +sandbox bwrap +\[sandbox\.bwrap\] path \/no\/such\/bwrap is not an executable file; source: shipped with ux \(@ux\/sandbox-bwrap\)$/m,
    );
    expect(doctor.stdout).toContain(
      'fix: set [sandbox.bwrap] path in config.toml to the absolute path of an installed bwrap (command -v bwrap), or remove it to use the one on PATH; or, where bubblewrap cannot run',
    );
    expect(doctor.stdout).toMatch(
      /^warn +config +.*bwrap_path is deprecated; write it as \[sandbox\.bwrap\] path = "\/no\/such\/bwrap"/m,
    );
    expect(doctor.status).toBe(1);
  });

  it('checks the configuration a -c override or a profile would give, and names a bad -c argument', async () => {
    const home = makeHome({ config: '[profiles.broken]\napproval_policy = "untrusted"\n' });
    const good = await runUx(['doctor'], home);
    expect(good.status).toBe(0);
    const override = await runUx(['doctor', '-c', 'sandbox_backends=["bwrp"]'], home);
    expect(override.stdout).toMatch(
      /^fail +sandbox_backends +-c sandbox_backends=\["bwrp"\]: unknown sandbox backend "bwrp" \(did you mean "bwrap"\?\)/m,
    );
    expect(override.status).toBe(1);
    const profile = await runUx(['doctor', '--profile', 'broken', '--json'], home);
    expect(profile.status).toBe(0);
    expect(JSON.stringify(JSON.parse(profile.stdout))).toContain('untrusted');
    const malformed = await runUx(['doctor', '-c', 'no-equals-sign'], home);
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toBe(
      "ux: -c no-equals-sign: expected key=value (e.g. -c sandbox_mode=read-only)\nRun 'ux doctor --help' for usage.\n",
    );
  });
});

describe('ux doctor: the trust boundary', () => {
  it('names the runtime directory, whether /tmp is private, and the repositories it protects', async () => {
    const home = makeHome();
    for (const repository of ['', 'vendor/lib', 'sub/deeper/x'])
      mkdirSync(join(home.workspace, repository, '.git'), { recursive: true });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout).toMatch(
      /^ok +runtime directory +\/\S+: sockets and private files of every ux process/m,
    );
    expect(doctor.stdout).toMatch(/^ok +private \/tmp +on: commands get a \/tmp of the session's own/m);
    expect(doctor.stdout).toMatch(
      /^ok +repositories +3 found in the writable roots \(\d+ directories read in \d+ ms\)/m,
    );
    const off = await runUx(['doctor', '-c', 'sandbox_workspace_write.private_tmp=false'], home);
    expect(off.stdout).toMatch(/^warn +private \/tmp +off: commands write the host's \/tmp/m);
    expect(off.stdout).toContain('fix: remove private_tmp = false from [sandbox_workspace_write]');
  });
});
