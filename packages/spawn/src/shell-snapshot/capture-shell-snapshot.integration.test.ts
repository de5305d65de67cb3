import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runToEnd } from '@ux/protocol-testing';
import { tempDir, useLeakCheck, warmUpSpawner, zshForkPath } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalSpawner } from '../local-spawner.js';
import {
  type CaptureShellSnapshotOptions,
  captureShellSnapshot,
  type ShellSnapshot,
} from './capture-shell-snapshot.js';
import { isShellSnapshotFresh } from './is-shell-snapshot-fresh.js';
import { snapshotCommandScript } from './snapshot-command-script.js';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';

const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

/** A temporary HOME with the given login files, and the environment commands start from. */
function home(files: Record<string, string>, extraEnv: Record<string, string> = {}) {
  const dir = tempDir('ux-snapshot-home-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const env = { PATH, HOME: dir, TERM: 'dumb', LANG: 'C.UTF-8', ...extraEnv };
  return { dir, env };
}

async function capture(
  shell: string,
  kind: SnapshotShellKind,
  env: Record<string, string>,
  more: Partial<CaptureShellSnapshotOptions> = {},
) {
  const state = tempDir('ux-snapshot-state-');
  return captureShellSnapshot({
    shell,
    kind,
    env,
    cwd: env.HOME!,
    file: join(state, 'snapshots', `${kind}.sh`),
    spawner,
    ...more,
  });
}

function captured(result: Awaited<ReturnType<typeof capture>>): ShellSnapshot {
  if (!result.ok) throw new Error(`capture failed: ${result.reason}\n${result.diagnostics}`);
  return result.snapshot;
}

/** Runs `cmd` the way a command with a snapshot runs: `SHELL -c '. SNAPSHOT; CMD'`, no login. */
async function runWith(
  snapshot: ShellSnapshot,
  env: Record<string, string>,
  cmd: string,
  kind?: SnapshotShellKind,
) {
  const child = await spawner.spawn({
    argv: [snapshot.shell, '-c', snapshotCommandScript(snapshot.file, cmd, kind)],
    cwd: env.HOME!,
    env,
    tty: false,
    stdin: 'closed',
  });
  return runToEnd(child);
}

function processesRunning(needle: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      const state = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(needle) && state !== 'Z') found.push(`${name}: ${cmdline}`);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

const BASH_PROFILE = `
export V='line one
it'"'"'s "quoted" $HOME'
export RAW=$'\\xff\\xfe-raw'
export PAGER=less-from-profile
export PATH="$HOME/bin:$PATH"
unset DROPME
alias myalias='echo from-alias'
myfunc() { echo "from-func $1"; }
shopt -s extglob
globfunc() { case $1 in +([0-9])) echo digits;; *) echo other;; esac; }
set -o noclobber
umask 027
echo "hello from the profile"
echo "a warning from the profile" >&2
`;

describe('bash', () => {
  it('captures variables, aliases, functions and options; a command sees them all, none of the printing', async () => {
    const { env } = home({ '.bash_profile': BASH_PROFILE }, { DROPME: 'dropped', KEEP: 'kept' });
    const snapshot = captured(await capture('/bin/bash', 'bash', env));
    expect(snapshot.kind).toBe('bash');

    const cmd = [
      'printf "%s\\n" "$V"',
      'type myalias',
      'myalias',
      'myfunc arg',
      'globfunc 123',
      'shopt extglob',
      'set -o | grep noclobber',
      'umask',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
      'echo "path=$PATH drop=${DROPME-unset} keep=$KEEP"',
    ].join('\n');
    const { status, text } = await runWith(snapshot, env, cmd, 'bash');
    expect(status.exitCode).toBe(0);
    const home_ = env.HOME;
    expect(text).toContain(`line one\nit's "quoted" $HOME\n`);
    expect(text).toContain("myalias is aliased to `echo from-alias'");
    expect(text).toContain('from-alias\n');
    expect(text).toContain('from-func arg\n');
    expect(text).toContain('digits\n');
    expect(text).toMatch(/extglob\s+on/);
    expect(text).toMatch(/noclobber\s+on/);
    expect(text).toContain('0027\n');
    // Debian's /etc/profile sets a PATH of its own; the profile's addition comes first.
    expect(text).toMatch(new RegExp(`path=${home_}/bin:/\\S+ drop=unset keep=kept\n`));
    expect(text).not.toContain('hello from the profile');
    expect(text).not.toContain('a warning from the profile');

    expect(snapshot.diagnostics).toContain('hello from the profile');
    expect(snapshot.diagnostics).toContain('a warning from the profile');
  });

  it('keeps values byte for byte (non-UTF-8 included) and works without a kind (eval form)', async () => {
    const { env } = home({ '.bash_profile': BASH_PROFILE });
    const snapshot = captured(await capture('/bin/bash', 'bash', env));
    const { output } = await runWith(snapshot, env, 'printf "%s" "$RAW"; myalias');
    expect(output.subarray(0, 6)).toEqual(Buffer.from([0xff, 0xfe, 0x2d, 0x72, 0x61, 0x77]));
    expect(output.toString('latin1')).toContain('from-alias');
  });

  it('writes only what the login changed, skipping excluded and shell-owned names', async () => {
    const { env } = home({ '.bash_profile': BASH_PROFILE }, { DROPME: 'x', KEEP: 'kept' });
    const snapshot = captured(
      await capture('/bin/bash', 'bash', env, { exclude: (name) => name === 'PAGER' }),
    );
    expect(snapshot.changedVariables).toEqual(['DROPME', 'PATH', 'RAW', 'V']);
    const text = readFileSync(snapshot.file, 'latin1');
    expect(text).toMatch(/^export V='line one$/m);
    expect(text).toMatch(/^unset DROPME$/m);
    expect(text).not.toMatch(/PAGER/);
    expect(text).not.toMatch(/less-from-profile/);
    expect(text).not.toMatch(/\bKEEP\b/);
    expect(text).not.toMatch(/^export (PWD|OLDPWD|SHLVL|_)=/m);
    expect(text).not.toContain('hello from the profile');
    expect(text.trimEnd().split('\n').at(-1)).toBe('builtin shopt -s expand_aliases');
    // The excluded variable keeps the value the command is started with.
    const { text: out } = await runWith(snapshot, { ...env, PAGER: 'cat' }, 'echo "pager=$PAGER"', 'bash');
    expect(out).toContain('pager=cat');
  });

  it('writes the file 0600 in a 0700 directory, atomically replaced on a second capture', async () => {
    const { env } = home({ '.bash_profile': BASH_PROFILE });
    const state = tempDir('ux-snapshot-state-');
    const file = join(state, 'deep', 'dir', 'snap.sh');
    const first = captured(await capture('/bin/bash', 'bash', env, { file }));
    expect(first.file).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(state, 'deep', 'dir')).mode & 0o777).toBe(0o700);
    const inode = statSync(file).ino;
    captured(await capture('/bin/bash', 'bash', env, { file }));
    expect(statSync(file).ino).not.toBe(inode);
    expect(readdirSync(join(state, 'deep', 'dir'))).toEqual(['snap.sh']);
  });

  it('is fresh until a login file changes, appears, or the snapshot file goes', async () => {
    const { dir, env } = home({ '.bash_profile': BASH_PROFILE });
    const snapshot = captured(await capture('/bin/bash', 'bash', env));
    expect(snapshot.loginFiles.map((entry) => entry.path)).toContain(join(dir, '.bash_profile'));
    expect(isShellSnapshotFresh(snapshot)).toBe(true);
    const later = new Date(Date.now() + 10_000);
    utimesSync(join(dir, '.bash_profile'), later, later);
    expect(isShellSnapshotFresh(snapshot)).toBe(false);

    const again = captured(await capture('/bin/bash', 'bash', env));
    expect(isShellSnapshotFresh(again)).toBe(true);
    writeFileSync(join(dir, '.bashrc'), 'export NEW=1\n');
    expect(isShellSnapshotFresh(again)).toBe(false);
  });

  it('sees an edited login file in the next capture', async () => {
    const { dir, env } = home({ '.bash_profile': 'export V=one\n' });
    const first = captured(await capture('/bin/bash', 'bash', env));
    expect((await runWith(first, env, 'echo "v=$V"', 'bash')).text).toBe('v=one\n');
    writeFileSync(join(dir, '.bash_profile'), 'export V=two\n');
    const second = captured(await capture('/bin/bash', 'bash', env));
    expect((await runWith(second, env, 'echo "v=$V"', 'bash')).text).toBe('v=two\n');
  });

  it('fails on a syntax error in a login file, naming it', async () => {
    const { env } = home({ '.bash_profile': 'export A=1\nif then fi\n' });
    const result = await capture('/bin/bash', 'bash', env);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(/syntax error/);
    expect(result.reason).toContain('.bash_profile');
  });

  it('fails when a login file calls exit 3', async () => {
    const { env } = home({ '.bash_profile': 'echo leaving\nexit 3\n' });
    const result = await capture('/bin/bash', 'bash', env);
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(/exited with code 3 before the capture ran/),
      diagnostics: 'leaving',
    });
  });

  it('ends a login file that sleeps, with its whole group, after timeoutMs', async () => {
    const { env } = home({ '.bash_profile': 'sleep 97531 &\nsleep 97532\n' });
    // Ended by the timeout (its reason says so), not by the sleep, which would last 27 hours.
    const result = await capture('/bin/bash', 'bash', env, { timeoutMs: 500 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(/did not finish within 500 ms/);
    expect(processesRunning('sleep 9753')).toEqual([]);
  });

  it('ends an endless loop', async () => {
    const { env } = home({ '.bash_profile': 'while :; do :; done\n' });
    const result = await capture('/bin/bash', 'bash', env, { timeoutMs: 500 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/did not finish within 500 ms/);
  });

  it('leaves no background job of a login file running after a successful capture', async () => {
    const { env } = home({ '.bash_profile': 'sleep 86420 >/dev/null 2>&1 &\nsleep 86421 &\nexport V=1\n' });
    const snapshot = captured(await capture('/bin/bash', 'bash', env));
    expect(readFileSync(snapshot.file, 'utf8')).toMatch(/^export V='1'$/m);
    expect(processesRunning('sleep 8642')).toEqual([]);
  });

  it('fails when the shell cannot start, and when cancelled', async () => {
    const { env } = home({});
    const missing = await capture('/nonexistent/bash', 'bash', env);
    expect(missing).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/could not start \/nonexistent\/bash/),
    });

    const slow = home({ '.bash_profile': 'sleep 97533\n' });
    const controller = new AbortController();
    const capturing = capture('/bin/bash', 'bash', slow.env, { signal: controller.signal });
    // Cancelled while the login file runs: once its sleep has started.
    const deadline = Date.now() + 15_000;
    while (processesRunning('sleep 97533').length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(processesRunning('sleep 97533')).toHaveLength(1);
    controller.abort();
    const cancelled = await capturing;
    expect(cancelled).toMatchObject({ ok: false, reason: 'the capture was cancelled' });
    expect(processesRunning('sleep 97533')).toEqual([]);
  });

  it('launches through wrap, and runs its cleanup', async () => {
    const { env } = home({ '.bash_profile': 'export V=wrapped\n' });
    const launches: string[][] = [];
    let cleanups = 0;
    const snapshot = captured(
      await capture('/bin/bash', 'bash', env, {
        wrap: async (launch) => {
          launches.push(launch.argv);
          return {
            argv: ['/usr/bin/env', 'ADDED_BY_WRAP=1', ...launch.argv],
            cwd: launch.cwd,
            env: { ...launch.env, SANDBOX_VAR: 'yes' },
            cleanup: async () => {
              cleanups++;
            },
          };
        },
      }),
    );
    // One launch: the check that the file loads runs in the capture's own process, once ux wrote it.
    expect(launches.map((argv) => argv.slice(0, 2))).toEqual([['/bin/bash', '-lc']]);
    expect(cleanups).toBe(1);
    const text = readFileSync(snapshot.file, 'utf8');
    expect(text).toMatch(/^export V='wrapped'$/m);
    // What the wrapper gave the shell is not a change made by the login files.
    expect(text).not.toMatch(/SANDBOX_VAR/);
  });
  it('makes the snapshot directory before the capture is planned (a sandbox shows only what exists)', async () => {
    const { env } = home({});
    const dir = join(tempDir('ux-snapshot-state-'), 'not-yet', 'snapshots');
    let existedWhenPlanned: boolean | undefined;
    captured(
      await capture('/bin/bash', 'bash', env, {
        file: join(dir, 'bash.sh'),
        wrap: async (launch) => {
          existedWhenPlanned = existsSync(dir);
          return launch;
        },
      }),
    );
    expect(existedWhenPlanned).toBe(true);
  });
  it('checks that the file loads in the process of the capture, with the environment it started with', async () => {
    // A login file that exports BASH_ENV: the check's `bash -c`, started with the login's environment,
    // would run it (the capture's own shell runs it too, after the login files: that part is expected).
    const { env } = home({
      '.bash_profile': 'export BASH_ENV="$HOME/noisy.sh"\nexport V=1\n',
      'noisy.sh': 'case "$BASH_EXECUTION_STRING" in *__ux_snapshot_check_*) echo NOISY-BASH-ENV >&2;; esac\n',
    });
    const launches: string[][] = [];
    const snapshot = captured(
      await capture('/bin/bash', 'bash', env, {
        wrap: async (launch) => {
          launches.push(launch.argv);
          return launch;
        },
      }),
    );
    expect(launches).toHaveLength(1);
    expect(snapshot.diagnostics).not.toContain('NOISY-BASH-ENV');
    expect(readFileSync(snapshot.file, 'utf8')).toMatch(/^export V='1'$/m);
    // Nothing of the check is left beside the snapshot.
    expect(readdirSync(join(snapshot.file, '..'))).toEqual([snapshot.file.split('/').at(-1)]);
  });

  it('fails, in the same single launch, when the written file does not load', async () => {
    // `declare -f` prints a function named `a=b` in a form bash cannot read back.
    const { env } = home({ '.bash_profile': 'function a=b { echo hi; }\nexport V=1\n' });
    const launches: string[][] = [];
    const result = await capture('/bin/bash', 'bash', env, {
      wrap: async (launch) => {
        launches.push(launch.argv);
        return launch;
      },
    });
    expect(launches).toHaveLength(1);
    expect(result).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /^the snapshot does not load in \/bin\/bash -c without errors: .*syntax error/,
      ),
    });
  });

  it('checks in a second launch when no `env` program is on PATH to start the check clean', async () => {
    const bin = tempDir('ux-snapshot-bin-');
    const { env } = home({ '.bash_profile': 'export V=1\n' }, { PATH: bin });
    const launches: string[][] = [];
    const snapshot = captured(
      await capture('/bin/bash', 'bash', env, {
        wrap: async (launch) => {
          launches.push(launch.argv);
          return launch;
        },
      }),
    );
    expect(launches.map((argv) => argv.slice(0, 2))).toEqual([
      ['/bin/bash', '-lc'],
      ['/bin/bash', '-c'],
    ]);
    expect(readFileSync(snapshot.file, 'utf8')).toMatch(/^export V='1'$/m);
  });

  it('is not bent by hostile login files: strict options, aliases and functions named after builtins', async () => {
    const { env } = home({
      '.bash_profile': [
        'set -euo pipefail',
        'set -x',
        'shopt -s expand_aliases',
        "alias printf='echo BROKEN' builtin='echo BROKEN'",
        'declare() { echo hijacked; }',
        'compgen() { echo hijacked; }',
        'set() { echo hijacked; }',
        'f-with-dash() { echo dash-fn; }',
        'export -f f-with-dash',
        "export WEIRD=$'tab\\there\\nnew'",
      ].join('\n'),
    });
    const snapshot = captured(await capture('/bin/bash', 'bash', env));
    const { status, text } = await runWith(
      snapshot,
      env,
      // The login's aliases apply to the command as they would after a login (a backslash steps around them).
      '\\printf "%s|" "$WEIRD"; bash -c f-with-dash; \\builtin set -o | grep -E "^(errexit|nounset|pipefail|xtrace) "',
      'bash',
    );
    expect(status.exitCode).toBe(0);
    expect(text).toMatch(
      /^tab\there\nnew\|dash-fn\nerrexit\s+on\nnounset\s+on\npipefail\s+on\nxtrace\s+off\n$/,
    );
    // The login's tracing went to diagnostics.
    expect(snapshot.diagnostics).toContain('+ shopt -s expand_aliases');
  });
});

describe('dash (sh)', () => {
  it('captures exported variables from ~/.profile; the printed line goes to diagnostics', async () => {
    const { env } = home({
      '.profile': `export V='line one\nit'"'"'s "quoted"'\nexport EMPTY=\nexport UNSET_EXPORTED\nalias nope='echo no'\necho "hello from dash"\n`,
    });
    const snapshot = captured(await capture('/usr/bin/dash', 'sh', env));
    const { text } = await runWith(
      snapshot,
      env,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
      'printf "[%s]\\n" "$V" "${EMPTY-unset}" "${UNSET_EXPORTED-unset}"',
      'sh',
    );
    expect(text).toBe(`[line one\nit's "quoted"]\n[]\n[unset]\n`);
    expect(snapshot.diagnostics).toBe('hello from dash');
    const file = readFileSync(snapshot.file, 'utf8');
    expect(file).not.toMatch(/alias/);
  });

  it('fails when ~/.profile calls exit 3', async () => {
    const { env } = home({ '.profile': 'exit 3\n' });
    expect(await capture('/usr/bin/dash', 'sh', env)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/exited with code 3/),
    });
  });

  it('fails on a syntax error in ~/.profile', async () => {
    const { env } = home({ '.profile': 'if then fi\n' });
    const result = await capture('/usr/bin/dash', 'sh', env);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/[Ss]yntax error/);
  });
});

describe('zsh (the patched zsh of ZshFork)', () => {
  const ZPROFILE = `
export V='line one
it'"'"'s "quoted"'
alias myalias='echo from-alias'
alias -g GLOBALALIAS='| tr a-z A-Z'
myfunc() { echo "from-func $1"; }
setopt extendedglob
umask 027
print "hello from zprofile"
print -u2 "a zsh warning"
`;

  it('captures variables, aliases (global ones too), functions and options', async () => {
    const zsh = zshForkPath();
    const { env } = home({ '.zprofile': ZPROFILE });
    const snapshot = captured(await capture(zsh, 'zsh', env));
    const cmd = [
      'printf "%s\\n" "$V"',
      'myalias',
      'echo shout GLOBALALIAS',
      'myfunc arg',
      '[[ -o extendedglob ]] && echo extendedglob-on',
      'umask',
    ].join('\n');
    for (const kind of ['zsh', undefined] as const) {
      const { status, text } = await runWith(snapshot, env, cmd, kind);
      expect(status.exitCode).toBe(0);
      expect(text).toBe(`line one\nit's "quoted"\nfrom-alias\nSHOUT\nfrom-func arg\nextendedglob-on\n027\n`);
    }
    expect(snapshot.diagnostics).toContain('hello from zprofile');
    expect(snapshot.diagnostics).toContain('a zsh warning');
    const file = readFileSync(snapshot.file, 'utf8');
    expect(file).not.toContain('hello from zprofile');
    expect(file).not.toMatch(/setopt .*\blogin\b/);
  });

  it('is not bent by hostile login files: ksh options, global aliases, functions named after builtins', async () => {
    const zsh = zshForkPath();
    const { env } = home({
      '.zprofile': [
        'setopt ksharrays shwordsplit kshoptionprint errexit nounset',
        "alias printf='echo BROKEN'",
        "alias -g for='BROKEN' done='BROKEN'",
        'typeset() { echo hijacked; }',
        'zf() { echo zf; }',
        'emulate sh -c "true"',
      ].join('\n'),
    });
    const snapshot = captured(await capture(zsh, 'zsh', env));
    const { status, text } = await runWith(
      snapshot,
      env,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
      'zf; a=(x y); echo ${a}; [[ -o kshoptionprint && -o errexit ]] && echo opts',
      'zsh',
    );
    expect(status.exitCode).toBe(0);
    expect(text).toBe('zf\nx\nopts\n');
  });

  it('reads an emulate sh login state back as such', async () => {
    const zsh = zshForkPath();
    const { env } = home({ '.zprofile': 'emulate sh\nexport E=emu\nzf() { echo zf; }\n' });
    const snapshot = captured(await capture(zsh, 'zsh', env));
    const { text } = await runWith(snapshot, env, 'echo $E; zf; emulate', 'zsh');
    expect(text).toBe('emu\nzf\nsh\n');
  });

  it('fails when a login file calls exit 3, and on a parse error', async () => {
    const zsh = zshForkPath();
    const exiting = home({ '.zprofile': 'exit 3\n' });
    expect(await capture(zsh, 'zsh', exiting.env)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/exited with code 3/),
    });
    const broken = home({ '.zprofile': 'export A=1\nbroken() {\n' });
    const result = await capture(zsh, 'zsh', broken.env);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/parse error/);
  });
});
