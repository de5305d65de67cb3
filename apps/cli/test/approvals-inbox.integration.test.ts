// The approvals inbox end to end: `ux mcp` driven by the MCP SDK's own client WITHOUT elicitation, its
// questions answered (or not) through the shipped `ux approvals` from another process.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { useLeakCheck } from '@ux/test-utils';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  makeHome,
  mcpClient,
  runUx,
  startUxInTerminal,
  type UxHome,
  warmUpTerminalSpawner,
} from './cli-harness.js';

beforeAll(warmUpTerminalSpawner);
useLeakCheck();

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

interface Listed {
  id: string;
  pid: number;
  kind: string;
  headline: string;
  details: { label: string; text: string }[];
  choices: { key: string; value: string; label: string }[];
  callId: string;
  expiresAt?: number;
  process: { kind: string; cwd: string };
}

async function serve(
  home: UxHome,
  args: string[] = ['--approval', 'on-request'],
  elicit?: (message: string) => ElicitResult,
) {
  const { client, transport } = mcpClient(home, args, elicit);
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  await client.connect(transport);
  open.push(client);
  const pid = transport.pid!;
  return { client, pid, stderr };
}

/**
 * The questions `ux approvals --json` lists for process `pid` (or of a process working in `pid` when
 * it is a directory), once there are `count` of them.
 */
async function pendingOf(home: UxHome, pid: number | string, count = 1): Promise<Listed[]> {
  for (;;) {
    const listed = await runUx(['approvals', '--json'], home);
    expect(listed.status, listed.stderr).toBe(0);
    const mine = (JSON.parse(listed.stdout) as { approvals: Listed[] }).approvals.filter((approval) =>
      typeof pid === 'number' ? approval.pid === pid : approval.process.cwd === pid,
    );
    if (mine.length >= count) return mine;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function text(result: unknown): string {
  return ((result as { content: { text: string }[] }).content ?? []).map((part) => part.text).join('');
}

describe('approvals inbox (ux mcp without elicitation, answered with ux approvals)', () => {
  it('a require_escalated call waits in the inbox, is approved with `ux approvals answer`, and runs', async () => {
    const home = makeHome();
    const target = join(home.home, 'escalated-approved.txt');
    const { client, pid, stderr } = await serve(home);
    const call = client.callTool({
      name: 'exec_command',
      arguments: {
        cmd: `touch ${target}`,
        sandbox_permissions: 'require_escalated',
        justification: 'needed',
      },
    });
    const [question] = await pendingOf(home, pid);
    expect(question!.id).toMatch(new RegExp(`^${pid}:\\d+$`));
    expect(question!.kind).toBe('escalation');
    expect(question!.headline).toBe('approve this command?');
    expect(question!.details).toContainEqual({ label: 'command', text: `touch ${target}` });
    expect(question!.details).toContainEqual({
      label: 'sandbox',
      text: 'approving runs it OUTSIDE the sandbox (full access to your files and network)',
    });
    // The terminal prompt's keys: approve once, for the session, always for the prefix `touch`, deny, abort.
    expect(question!.choices.map((choice) => choice.key)).toEqual(['y', 'a', 'p', 'n', 'x']);
    // Nothing ran before the answer.
    expect(existsSync(target)).toBe(false);
    expect(stderr.join('')).toContain('approval questions go to the approvals inbox');

    // A decision the question does not offer, and an id nobody has, are refused with what there is.
    const wrong = await runUx(['approvals', 'answer', question!.id, 'deny-session'], home);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(
      `question ${question!.id} does not offer "deny-session"; it offers approve, approve-session, approve-prefix, deny, abort`,
    );
    const unknown = await runUx(['approvals', 'answer', `${pid}:999`, 'approve'], home);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain(`no pending question "${pid}:999" here; pending: ${question!.id}`);

    const answered = await runUx(['approvals', 'answer', question!.id, 'approve'], home);
    expect(answered.status, answered.stderr).toBe(0);
    expect(answered.stdout).toBe(`${question!.id}: approve once\n`);
    const result = await call;
    expect(text(result)).toContain('Process exited with code 0');
    expect(existsSync(target)).toBe(true);
    // Answered: no longer pending, and a second answer is told so.
    expect(await pendingOf(home, pid, 0)).toEqual([]);
    const again = await runUx(['approvals', 'answer', question!.id, 'approve'], home);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`no pending question "${question!.id}" here`);
  });

  it('denied in the inbox: nothing runs and the model reads that the person refused', async () => {
    const home = makeHome();
    const target = join(home.home, 'escalated-denied.txt');
    const { client, pid } = await serve(home);
    const call = client.callTool({
      name: 'exec_command',
      arguments: {
        cmd: `touch ${target}`,
        sandbox_permissions: 'require_escalated',
        justification: 'needed',
      },
    });
    const [question] = await pendingOf(home, pid);
    const answered = await runUx(['approvals', 'answer', question!.id, 'deny'], home);
    expect(answered.stdout).toBe(`${question!.id}: deny\n`);
    const result = (await call) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('rejected by the user');
    expect(result.structuredContent).toMatchObject({
      status: 'refused',
      refusal: { decided_by: 'person', reason: 'rejected by the user' },
    });
    expect(existsSync(target)).toBe(false);
  });

  it('with approval_timeout_s = 1, the model hears that nobody answered within 1 s', async () => {
    const home = makeHome({ config: 'approval_timeout_s = 1\n' });
    const target = join(home.home, 'escalated-unanswered.txt');
    const { client, pid } = await serve(home);
    const result = (await client.callTool({
      name: 'exec_command',
      arguments: {
        cmd: `touch ${target}`,
        sandbox_permissions: 'require_escalated',
        justification: 'needed',
      },
    })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('nobody answered within 1 s');
    expect(result.structuredContent).toMatchObject({ status: 'refused', refusal: { decided_by: 'nobody' } });
    expect(String(result.structuredContent!.next_step)).toContain(
      'Nobody answered the approval question within 1 s (approval_timeout_s)',
    );
    expect(existsSync(target)).toBe(false);
    expect(await pendingOf(home, pid, 0)).toEqual([]);
  });

  it('tells the model that the person can be asked, not that nobody can', async () => {
    const home = makeHome();
    const { client } = await serve(home);
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toContain('Approvals:');
    expect(instructions).not.toContain('nobody can be asked');
    expect(instructions).toContain('the person');
  });

  it('client-then-inbox: a client that declines at once (codex exec) is not taken as the person; the inbox asks', async () => {
    const home = makeHome();
    const target = join(home.home, 'declined-then-approved.txt');
    let asked = 0;
    const { client, pid, stderr } = await serve(home, ['--approval', 'on-request'], () => {
      asked += 1;
      return { action: 'decline' };
    });
    const escalated = (file: string) =>
      client.callTool({
        name: 'exec_command',
        arguments: { cmd: `touch ${file}`, sandbox_permissions: 'require_escalated', justification: 'x' },
      });
    const call = escalated(target);
    const [question] = await pendingOf(home, pid);
    expect(asked).toBe(1);
    expect(stderr.join('')).toContain(
      'the MCP client answers approval questions itself, too fast for a person; approval questions go to the approvals inbox',
    );
    await runUx(['approvals', 'answer', question!.id, 'approve'], home);
    expect(text(await call)).toContain('Process exited with code 0');
    expect(existsSync(target)).toBe(true);
    // From then on the client is not asked again: the next question goes straight to the inbox.
    const second = escalated(join(home.home, 'second.txt'));
    const [next] = await pendingOf(home, pid);
    expect(asked).toBe(1);
    await runUx(['approvals', 'answer', next!.id, 'deny'], home);
    const refused = (await second) as { structuredContent?: Record<string, unknown> };
    expect(refused.structuredContent).toMatchObject({ refusal: { decided_by: 'person' } });
  });

  it('ux exec without a terminal: the question waits in the inbox, stderr says so, and the answer lets it run', async () => {
    const home = makeHome();
    const run = runUx(['exec', '--approval', 'untrusted', '--', 'touch made-by-exec'], home);
    const [question] = await pendingOf(home, home.workspace);
    expect(question!.process.kind).toBe('exec');
    expect(question!.kind).toBe('exec_approval');
    const answered = await runUx(['approvals', 'answer', question!.id, 'approve'], home);
    expect(answered.status, answered.stderr).toBe(0);
    const result = await run;
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `ux: \`touch made-by-exec\` needs approval: waiting for an answer in the approvals inbox (question ${question!.id})`,
    );
    expect(existsSync(join(home.workspace, 'made-by-exec'))).toBe(true);
  });

  it('each new question pops a desktop notification through notify-send when it is on PATH', async () => {
    const home = makeHome();
    const bin = join(home.home, 'notifier-bin');
    mkdirSync(bin);
    const said = join(home.home, 'notified.txt');
    writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\n' "$@" >> ${said}\n`);
    chmodSync(join(bin, 'notify-send'), 0o755);
    home.env.PATH = `${bin}:${home.env.PATH}`;
    const { client, pid } = await serve(home);
    const call = client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'touch notified', sandbox_permissions: 'require_escalated', justification: 'x' },
    });
    const [question] = await pendingOf(home, pid);
    while (!existsSync(said) || !readFileSync(said, 'utf8').includes('question'))
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(said, 'utf8')).toBe(
      `--app-name=ux\n--urgency=critical\nux: approve this command?\ntouch notified\nanswer with: ux approvals (question ${question!.id})\n`,
    );
    await runUx(['approvals', 'answer', question!.id, 'deny'], home);
    await call;
  });

  it('ux approvals in a real terminal and ux approvals --watch: one key answers, the bell rings for a new question', async () => {
    const home = makeHome();
    const first = runUx(['exec', '--approval', 'untrusted', '--', 'touch first-by-key'], home);
    const [question] = await pendingOf(home, home.workspace);
    const list = await startUxInTerminal(['approvals'], home);
    await list.waitFor(`[${question!.id}] exec pid ${question!.pid}, exec approval`);
    await list.waitFor('command: touch first-by-key');
    await list.waitFor('Press y/a/p/n/x (s skips, q leaves): ');
    await list.type('z');
    await list.waitFor('"z" is not an answer');
    await list.type('y');
    await list.waitFor('y: approve once');
    expect(await list.exitCode()).toBe(0);
    expect((await first).status).toBe(0);
    expect(existsSync(join(home.workspace, 'first-by-key'))).toBe(true);

    const watch = await startUxInTerminal(['approvals', '--watch'], home);
    await watch.waitFor('watching for approval questions');
    const second = runUx(['exec', '--approval', 'untrusted', '--', 'touch second-by-key'], home);
    await watch.waitFor('\u0007');
    await watch.waitFor('command: touch second-by-key');
    await watch.waitFor('Press y/a/p/n/x');
    await watch.type('n');
    await watch.waitFor('n: deny');
    const refused = await second;
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain('rejected by the user');
    expect(existsSync(join(home.workspace, 'second-by-key'))).toBe(false);
    // Still watching: Ctrl-C ends it.
    await watch.type('\u0003');
    expect(await watch.exitCode()).toBe(0);
  });

  it('approvals_via = "client" keeps the old refusal for a client without elicitation', async () => {
    const home = makeHome({ config: 'approvals_via = "client"\n' });
    const { client } = await serve(home);
    const result = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'touch x', sandbox_permissions: 'require_escalated', justification: 'needed' },
    });
    expect(text(result)).toContain(
      'the MCP client does not support elicitation and approvals_via is "client"',
    );
  });

  it('a user config cannot change an approvals_via pinned by the requirements', async () => {
    const home = makeHome({
      config: 'approvals_via = "client"\n',
      requirements: 'approvals_via = "inbox"\n',
    });
    const doctor = await runUx(['doctor'], home);
    expect(doctor.stdout + doctor.stderr).toContain(
      `${home.config}:1:1: approvals_via = "client" is not allowed here: the managed requirements pin approvals_via = "inbox" at ${home.requirements}:1:1`,
    );
  });

  it('a sandboxed command cannot reach the control sockets to answer its own question', async () => {
    const home = makeHome();
    const target = join(home.home, 'forged.txt');
    const { client, pid } = await serve(home);
    // A background session of the model keeps trying every way in: the control directories, and the
    // shipped ux approvals answering the questions this process will ask (ids PID:1 to PID:3).
    const ux = `${process.execPath} ${BIN}`;
    const attempts = join(home.workspace, 'attempts.log');
    const started = await client.callTool({
      name: 'exec_command',
      arguments: {
        cmd: `while :; do ls -a /run/user/$(id -u)/ux/control /tmp/ux-$(id -u)/control >>${attempts} 2>&1; ${ux} approvals --json >>${attempts} 2>&1; for n in 1 2 3; do ${ux} approvals answer ${pid}:$n approve >>${attempts} 2>&1; echo "answer exit $?" >>${attempts}; done; done`,
        yield_time_ms: 250,
      },
    });
    expect(text(started)).toContain('Process running with session ID');
    const call = client.callTool({
      name: 'exec_command',
      arguments: { cmd: `touch ${target}`, sandbox_permissions: 'require_escalated', justification: 'x' },
    });
    const [question] = await pendingOf(home, pid);
    // Let the attacker go round its loop several times while the question is pending.
    const tries = () =>
      existsSync(attempts) ? readFileSync(attempts, 'utf8').split('answer exit').length - 1 : 0;
    const before = tries();
    while (tries() < before + 6) await new Promise((resolve) => setTimeout(resolve, 100));
    const log = readFileSync(attempts, 'utf8');
    expect(log).toContain('answer exit 1');
    expect(log).not.toContain('answer exit 0');
    expect(log).toContain('{"approvals":[]}');
    expect(log).not.toContain(`${pid}.sock`);
    // Still pending, still not run: only the person's answer from outside counts.
    expect((await pendingOf(home, pid)).map((approval) => approval.id)).toEqual([question!.id]);
    expect(existsSync(target)).toBe(false);
    const answered = await runUx(['approvals', 'answer', question!.id, 'deny'], home);
    expect(answered.status).toBe(0);
    expect(text(await call)).toContain('rejected by the user');
    expect(existsSync(target)).toBe(false);
  });
});
