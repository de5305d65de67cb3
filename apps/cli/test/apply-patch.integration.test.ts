// apply_patch through what users run: the model's own `apply_patch <<'EOF'` through `ux exec` (the
// door applies it, nothing is spawned), a sandboxed script calling `apply_patch` (it runs inside the
// sandbox), and `ux apply-patch` itself.
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, makeHome, runUx, startUxInTerminal, warmUpTerminalSpawner } from './cli-harness.js';

beforeAll(() => warmUpTerminalSpawner());
useLeakCheck();

const NO_TMP = '[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';
const patch = (body: string) => `*** Begin Patch\n${body}*** End Patch\n`;

describe('apply_patch', () => {
  it('ux exec applies a model-style heredoc patch in the door, with the receipt the model expects', async () => {
    const home = makeHome({ config: NO_TMP });
    writeFileSync(join(home.workspace, 'a.txt'), 'one\ntwo\n');
    const cmd = `apply_patch <<'EOF'\n${patch('*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: b.txt\n+bee\n')}EOF\n`;
    const result = await runUx(['exec', '--', cmd], home);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\nProcess exited with code 0\nOriginal token count: \d+\nOutput:\nSuccess\. Updated the following files:\nA b\.txt\nM a\.txt\n\n$/,
    );
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('one\nTWO\n');
    expect(readFileSync(join(home.workspace, 'b.txt'), 'utf8')).toBe('bee\n');
  });

  it('without a person to ask (approvals_via = "client"), a patch outside the workspace is refused and writes nothing', async () => {
    const home = makeHome({ config: `approvals_via = "client"\n${NO_TMP}` });
    const cmd = `apply_patch <<'EOF'\n${patch('*** Add File: ../outside.txt\n+x\n')}EOF\n`;
    const result = await runUx(['exec', '--', cmd], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('apply_patch rejected: no one could be asked for approval');
    expect(existsSync(join(home.home, 'outside.txt'))).toBe(false);
  });

  it('at a terminal, asks about a path outside in patch words, and one key applies it', async () => {
    const home = makeHome({ config: NO_TMP });
    const cmd = `apply_patch <<'EOF'\n${patch('*** Add File: ../outside.txt\n+hello\n')}EOF\n`;
    const session = await startUxInTerminal(['exec', '--', cmd], home);
    await session.waitFor('apply this patch? (ux writes the files itself)');
    await session.waitFor('patch:   A ../outside.txt (+1 −0)');
    await session.waitFor('approving lets ux write these files outside the sandbox');
    await session.waitFor('Press y/n/x');
    await session.type('y');
    await session.waitFor('A ../outside.txt');
    expect(await session.exitCode()).toBe(0);
    expect(readFileSync(join(home.home, 'outside.txt'), 'utf8')).toBe('hello\n');
  });

  it('a sandboxed script finds apply_patch on its PATH, and its writes obey the sandbox', async () => {
    const home = makeHome({ config: NO_TMP });
    writeFileSync(join(home.workspace, 'a.txt'), 'one\n');
    writeFileSync(
      join(home.workspace, 'inside.sh'),
      `apply_patch <<'P'\n${patch('*** Update File: a.txt\n@@\n-one\n+ONE\n')}P\n`,
    );
    writeFileSync(
      join(home.workspace, 'outside.sh'),
      `apply_patch <<'P'\n${patch('*** Add File: ../escape.txt\n+x\n')}P\n`,
    );
    const result = await runUx(['exec', '--', 'bash inside.sh; bash outside.sh; echo "status=$?"'], home);
    expect(result.stdout).toContain('Success. Updated the following files:\nM a.txt');
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('ONE\n');
    expect(result.stdout).toMatch(/read-only file system/i);
    expect(result.stdout).toContain('status=1');
    expect(existsSync(join(home.home, 'escape.txt'))).toBe(false);
  });

  it('a sandboxed script runs apply_patch even when ux itself lies where the sandbox hides (/tmp)', async () => {
    // ux installed under /tmp (a clone made with mktemp -d): the session's private /tmp hides it, and
    // the apply_patch script execs Node and ux.cjs from there.
    const installed = tempDir('ux-installed-');
    cpSync(dirname(BIN), join(installed, 'dist'), { recursive: true });
    symlinkSync(join(dirname(BIN), '..', 'node_modules'), join(installed, 'node_modules'));
    const home = makeHome();
    writeFileSync(join(home.workspace, 'a.txt'), 'one\n');
    writeFileSync(
      join(home.workspace, 'inside.sh'),
      `apply_patch <<'P'\n${patch('*** Update File: a.txt\n@@\n-one\n+ONE\n')}P\n`,
    );
    const result = await runUx(['exec', '--', 'bash inside.sh; echo "status=$?"'], home, {
      bin: join(installed, 'dist', 'ux.cjs'),
    });
    expect(result.stdout).toContain('Success. Updated the following files:\nM a.txt');
    expect(result.stdout).toContain('status=0');
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('ONE\n');
  });

  it('ux apply-patch applies from stdin or its argument, and a bad patch changes nothing', async () => {
    const home = makeHome();
    writeFileSync(join(home.workspace, 'a.txt'), 'one\n');
    const fromStdin = await runUx(['apply-patch'], home, { input: patch('*** Add File: s.txt\n+stdin\n') });
    expect(fromStdin).toMatchObject({
      status: 0,
      stdout: 'Success. Updated the following files:\nA s.txt\n',
    });
    const fromArgument = await runUx(['apply-patch', patch('*** Delete File: s.txt\n')], home);
    expect(fromArgument).toMatchObject({
      status: 0,
      stdout: 'Success. Updated the following files:\nD s.txt\n',
    });
    const bad = await runUx(
      [
        'apply-patch',
        patch('*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: a.txt\n@@\n-missing\n+x\n'),
      ],
      home,
    );
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/a\.txt/);
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('one\n');
    const empty = await runUx(['apply-patch'], home, { input: '' });
    expect(empty.status).toBe(2);
  });
});
