// `process/start` with Codex's `shellSnapshot` parameter, over real stdio JSON-RPC: the login shell is
// captured once per scope and shell (read-only, no network, through bwrap), `[shell, -lc, SCRIPT]` runs
// as `[shell, -c, '. SNAPSHOT; SCRIPT']`, and the snapshots are gone when the server stops.
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uxRuntimeRoot } from '@ux/protocol-utils';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PATH, uri, WireSession, workspaceWriteContext } from './test-support.js';

useLeakCheck(5_000);

const NOISE = 'hello from the profile';
const PROFILE = `export V='line one
it'"'"'s "quoted"'
export PATH="$HOME/bin:$PATH"
alias myalias='echo from-alias'
myfunc() { echo "from-func $1"; }
echo "${NOISE}"
`;

/** A server whose temporary directory is `tmp` (its state goes to the user's runtime root instead). */
async function server(tmp: string) {
  const session = WireSession.start(['--listen', 'stdio'], { ...process.env, TMPDIR: tmp });
  onTestFinished(async () => {
    await session.close();
  });
  const init = await session.request('initialize', { clientName: 'ux-test' });
  session.send({ method: 'initialized', params: {} });
  return { session, init };
}

function home(files: Record<string, string>) {
  const dir = tempDir('ux-es-snap-home-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const bash = { scopeId: 'scope-1', shell: { name: 'bash', path: '/bin/bash' } };

async function run(
  session: WireSession,
  processId: string,
  argv: string[],
  homeDir: string,
  extra: Record<string, unknown> = {},
) {
  const started = await session.request('process/start', {
    processId,
    argv,
    cwd: uri(homeDir),
    env: { PATH, HOME: homeDir },
    tty: false,
    shellSnapshot: bash,
    ...extra,
  });
  if (started.error) throw new Error(`start failed: ${started.error.message}`);
  const events = await session.finished(processId);
  const exited = events.find((m) => m.method === 'process/exited')!.params!;
  return { output: session.output(processId), exitCode: exited.exitCode as number, started };
}

const stderrOf = (session: WireSession) => session.stderr.join('');
const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('shellSnapshot', () => {
  it('advertises shellSnapshotV2', async () => {
    const { init } = await server(tempDir('ux-es-snap-tmp-'));
    expect(init.result).toMatchObject({ environmentInfo: { capabilities: { shellSnapshotV2: true } } });
  });

  it('runs a -lc command with the captured login state and none of its output; the state is removed at shutdown', async () => {
    const tmp = tempDir('ux-es-snap-tmp-');
    const { session } = await server(tmp);
    const dir = home({ '.bash_profile': PROFILE });
    const script =
      'printf "%s\\n" "$V"; myalias; myfunc arg; echo "path=$PATH"; tr "\\0" "\\n" < /proc/$$/cmdline';
    const first = await run(session, 'p1', ['/bin/bash', '-lc', script], dir);
    expect(first.exitCode).toBe(0);
    expect(first.started.result).toEqual({ processId: 'p1', sandboxType: 'none' });
    expect(first.output).toContain(`line one\nit's "quoted"\nfrom-alias\nfrom-func arg\npath=${dir}/bin:`);
    expect(first.output).not.toContain(NOISE);
    // The command ran as `bash -c '. SNAPSHOT\nSCRIPT'`, in one process.
    const argv = first.output.slice(first.output.indexOf('/bin/bash\n')).split('\n');
    expect(argv.slice(0, 2)).toEqual(['/bin/bash', '-c']);
    const sourced = /^\. '([^']+)'$/.exec(argv[2]!)?.[1];
    // In this server's own directory of the user's runtime root (hidden from every sandbox), not in
    // the temporary directory.
    expect(sourced).toMatch(
      new RegExp(
        `^${uxRuntimeRoot()}/exec-server-${session.child.pid}-[0-9a-f]{8}/shell-snapshots/[0-9a-f]+\\.bash\\.sh$`,
      ),
    );
    expect(readdirSync(tmp).filter((name) => name.includes('exec-server'))).toEqual([]);
    expect(statSync(sourced!).mode & 0o777).toBe(0o600);
    expect(statSync(join(sourced!, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(join(sourced!, '../..')).mode & 0o777).toBe(0o700);
    // What the login files printed is in the server's log, not in any output.
    expect(stderrOf(session)).toContain(NOISE);

    // The same scope and shell reuse the snapshot: no second capture.
    const second = await run(session, 'p2', ['/bin/bash', '-lc', 'myfunc again'], dir);
    expect(second.output).toBe('from-func again\n');
    expect(count(stderrOf(session), NOISE)).toBe(1);

    await session.close();
    expect(existsSync(sourced!)).toBe(false);
    expect(existsSync(join(sourced!, '../..'))).toBe(false);
  });

  it('captures again when a login file changes, or when a variable the login files change starts differently', async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const dir = home({ '.bash_profile': PROFILE });
    expect((await run(session, 'a', ['/bin/bash', '-lc', 'echo "v=$V"'], dir)).output).toContain(
      'v=line one',
    );
    writeFileSync(join(dir, '.bash_profile'), `export V=two\necho "${NOISE}"\n`);
    const later = new Date(Date.now() + 10_000);
    utimesSync(join(dir, '.bash_profile'), later, later);
    expect((await run(session, 'b', ['/bin/bash', '-lc', 'echo "v=$V"'], dir)).output).toBe('v=two\n');
    expect(count(stderrOf(session), NOISE)).toBe(2);

    // A variable the profile builds from its own starting value (as PATH="$HOME/bin:$PATH"): a start
    // where it starts differently gets a new snapshot.
    writeFileSync(join(dir, '.bash_profile'), `export ACC="$ACC:added"\necho "${NOISE}"\n`);
    utimesSync(join(dir, '.bash_profile'), new Date(Date.now() + 20_000), new Date(Date.now() + 20_000));
    const acc = async (processId: string, start: string) =>
      (
        await run(session, processId, ['/bin/bash', '-lc', 'echo "$ACC"'], dir, {
          env: { PATH, HOME: dir, ACC: start, UNRELATED: processId },
        })
      ).output;
    expect(await acc('c', 'one')).toBe('one:added\n');
    // Other variables may differ from start to start without a new capture.
    expect(await acc('d', 'one')).toBe('one:added\n');
    expect(count(stderrOf(session), NOISE)).toBe(3);
    expect(await acc('e', 'two')).toBe('two:added\n');
    expect(count(stderrOf(session), NOISE)).toBe(4);
  });

  it('captures once for starts of one scope that arrive together; another scope gets its own', async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const dir = home({ '.bash_profile': PROFILE });
    const outputs = await Promise.all(
      ['t1', 't2', 't3'].map((id) => run(session, id, ['/bin/bash', '-lc', `myfunc ${id}`], dir)),
    );
    expect(outputs.map((o) => o.output)).toEqual(['from-func t1\n', 'from-func t2\n', 'from-func t3\n']);
    expect(count(stderrOf(session), NOISE)).toBe(1);
    await run(session, 't4', ['/bin/bash', '-lc', 'true'], dir, {
      shellSnapshot: { ...bash, scopeId: 'other' },
    });
    expect(count(stderrOf(session), NOISE)).toBe(2);
  });

  it('runs anything but `[shell.path, -lc, script]` as given', async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const dir = home({ '.bash_profile': PROFILE });
    // No login: no login files, no snapshot.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    const plain = await run(session, 'n1', ['/bin/bash', '-c', 'echo "v=${V-unset}"'], dir);
    expect(plain.output).toBe('v=unset\n');
    // Another spelling of the shell: run as given, so the login files run (and print).
    const other = await run(session, 'n2', ['bash', '-lc', 'echo done'], dir);
    expect(other.output).toBe(`${NOISE}\ndone\n`);
    expect(stderrOf(session)).not.toContain(NOISE);
  });

  it('falls back to the argv as given, with one warning in the log, when the capture fails', async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const dir = home({ '.bash_profile': 'export V=partial\nif then fi\n' });
    const first = await run(session, 'f1', ['/bin/bash', '-lc', 'echo "v=$V"'], dir);
    expect(first.exitCode).toBe(0);
    // The login shell ran the broken file itself.
    expect(first.output).toContain('syntax error');
    expect(first.output).toContain('v=partial');
    const warning =
      'warning: no shell snapshot of /bin/bash (scope scope-1): a login file has a syntax error';
    expect(stderrOf(session)).toContain(warning);
    await run(session, 'f2', ['/bin/bash', '-lc', 'true'], dir);
    expect(count(stderrOf(session), warning)).toBe(1);

    // Fixed: the next start captures again.
    writeFileSync(join(dir, '.bash_profile'), 'export V=fixed\n');
    utimesSync(join(dir, '.bash_profile'), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    const fixed = await run(
      session,
      'f3',
      ['/bin/bash', '-lc', 'echo "v=$V"; tr "\\0" " " < /proc/$$/cmdline'],
      dir,
    );
    expect(fixed.output).toMatch(/^v=fixed\n\/bin\/bash -c \. '/);
  });

  it('blocks what the login files write while captured, and runs a sandboxed command with the snapshot', async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const root = tempDir('ux-es-snap-box-');
    const workspace = join(root, 'ws');
    mkdirSync(workspace);
    const dir = home({
      '.bash_profile': `export V=boxed\ntouch "$HOME/written-by-profile" && echo wrote-home\ntouch "${workspace}/written-by-profile" && echo wrote-workspace\n`,
    });
    const result = await run(session, 's1', ['/bin/bash', '-lc', 'echo "v=$V"; touch made-by-command'], dir, {
      cwd: uri(workspace),
      sandbox: workspaceWriteContext(workspace),
    });
    expect(result.started.result).toEqual({ processId: 's1', sandboxType: 'linuxSeccomp' });
    expect(result.output).toBe('v=boxed\n');
    expect(result.exitCode).toBe(0);
    // The capture could write nowhere, not even in the command's workspace; the command could.
    expect(existsSync(join(dir, 'written-by-profile'))).toBe(false);
    expect(existsSync(join(workspace, 'written-by-profile'))).toBe(false);
    expect(existsSync(join(workspace, 'made-by-command'))).toBe(true);
    expect(stderrOf(session)).not.toContain('wrote-');

    // An unsandboxed request's capture is read-only too.
    const open = await run(session, 's2', ['/bin/bash', '-lc', 'echo "v=$V"'], dir, {
      shellSnapshot: { ...bash, scopeId: 'scope-2' },
    });
    expect(open.output).toBe('v=boxed\n');
    expect(existsSync(join(dir, 'written-by-profile'))).toBe(false);
  });

  it("keeps what the start's envPolicy drops out of the snapshot, even when a login file exports it", async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const dir = home({ '.bash_profile': 'export BOX_CRED=secret-from-profile OTHER_VAR=kept\n' });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions
    const script = 'echo "cred=${BOX_CRED-unset} other=${OTHER_VAR-unset}"';
    const policy = (exclude: string[]) => ({
      envPolicy: { inherit: 'all', ignoreDefaultExcludes: true, exclude, set: {}, includeOnly: [] },
    });
    // Control: a policy that drops nothing, so the profile's export reaches the command.
    const open = await run(session, 'e1', ['/bin/bash', '-lc', script], dir, policy([]));
    expect(open.output).toBe('cred=secret-from-profile other=kept\n');
    const kept = await run(session, 'e2', ['/bin/bash', '-lc', script], dir, policy(['BOX_CRED']));
    expect(kept.output).toBe('cred=unset other=kept\n');
  });

  it('refuses a malformed shellSnapshot with -32602, running nothing', async () => {
    const { session } = await server(tempDir('ux-es-snap-tmp-'));
    const dir = home({});
    const marker = join(dir, 'ran');
    const base = {
      argv: ['/bin/bash', '-lc', `touch ${marker}`],
      cwd: uri(dir),
      env: { PATH, HOME: dir },
      tty: false,
    };
    const cases: [unknown, RegExp][] = [
      [{ scopeId: '', shell: bash.shell }, /^shellSnapshot\.scopeId must be a non-empty string/],
      [
        { scopeId: 's', shell: { name: 'bash', path: 'bash' } },
        /^shellSnapshot\.shell\.path must be an absolute path/,
      ],
      [
        { scopeId: 's', shell: { name: '', path: '/bin/bash' } },
        /^shellSnapshot\.shell\.name must not be empty/,
      ],
      [{ scopeId: 's' }, /^shellSnapshot\.shell: Invalid input/],
      [{ scopeId: 7, shell: bash.shell }, /^shellSnapshot\.scopeId: Invalid input/],
    ];
    let n = 0;
    for (const [shellSnapshot, message] of cases) {
      const answer = await session.request('process/start', { ...base, processId: `x${n++}`, shellSnapshot });
      expect(answer.error?.code).toBe(-32602);
      expect(answer.error?.message).toMatch(message);
    }
    expect(existsSync(marker)).toBe(false);
    // null means none, as an absent field.
    const plain = await session.request('process/start', { ...base, processId: 'ok', shellSnapshot: null });
    expect(plain.result).toEqual({ processId: 'ok', sandboxType: 'none' });
  });
});
