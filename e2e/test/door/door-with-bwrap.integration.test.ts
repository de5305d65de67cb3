// The door with the real sandbox: scenarios 23 and 24 of docs/reference/door.md §15.1, the approval
// scenarios of docs/reference/door.md §15.3, and the worked example of the project's seed material.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import {
  type ApprovalPolicy,
  type ApprovalRequest,
  type EffectivePolicy,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type SandboxPolicy,
  type SpawnRequest,
  type UxEvent,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { createUnifiedExec } from '@ux/unified-exec';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const local = createLocalSpawner();
const backend = createBwrapSandbox();
let root: string;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-door-bwrap-')));
  await warmUpSpawner(local);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
// Registered after the leak check, so it runs first: the backend's path guard is not a leak.
afterAll(() => backend.close());

const WORKSPACE_WRITE: SandboxPolicy = {
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: true,
  exclude_slash_tmp: true,
};

/** For commands that end at once: a loaded machine's slow start must not make a fast denial late. */
const FAST = { earlyExitWindowMs: 5_000 };

function door(
  approvalPolicy: ApprovalPolicy,
  policy: SandboxPolicy | EffectivePolicy,
  answers: ReviewDecision[] = [{ type: 'approved' }],
  options: { stallAfterSpawnMs?: number; earlyExitWindowMs?: number } = {},
) {
  const name = `case-${Math.random().toString(36).slice(2, 8)}`;
  const cwd = join(root, name, 'workspace');
  // A HOME of its own, empty: no start-up file of this machine runs in these shells.
  const home = join(root, name, 'home');
  mkdirSync(home, { recursive: true });
  const outside = join(root, name, 'outside');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outside, { recursive: true });
  const prompts: ApprovalRequest[] = [];
  const spawns: SpawnRequest[] = [];
  const exec = createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
      approvalPolicy,
      policy,
      reviewer: {
        specificationVersion: REVIEWER_SPECIFICATION_VERSION,
        id: 'scripted',
        review: async (request) => {
          prompts.push(request);
          return answers[Math.min(prompts.length - 1, answers.length - 1)]!;
        },
      },
    }),
    spawner: {
      spawn: async (request) => {
        spawns.push(request);
        const child = await local.spawn(request);
        // A busy event loop right after the first spawn (a grammar compiled on first use, say): the
        // command exits meanwhile, and the early-exit window's timer expires before the exit is seen.
        if (options.stallAfterSpawnMs && spawns.length === 1) {
          const stall = options.stallAfterSpawnMs;
          setImmediate(() => {
            const until = Date.now() + stall;
            while (Date.now() < until) {}
          });
        }
        return child;
      },
    },
    toolPlan: planTools({
      flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
      platform: 'linux',
    }),
    cwd,
    userShell: '/bin/bash',
    deterministicIds: true,
    baseEnvironment: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
    ...(options.earlyExitWindowMs === undefined ? {} : { earlyExitWindowMs: options.earlyExitWindowMs }),
  });
  const events: UxEvent[] = [];
  exec.onEvent((event) => events.push(event));
  onTestFinished(() => exec.shutdown());
  const begins = () =>
    events
      .filter((event) => event.type === 'exec_command_begin')
      .map((event) => (event as { sandbox: string }).sandbox);
  return { exec, cwd, outside, prompts, spawns, begins };
}

const receipt = (text: string) => ({
  exitCode: /Process exited with code (-?\d+)/.exec(text)?.[1],
  sessionId: /Process running with session ID (\d+)/.exec(text)?.[1],
  wall: Number(/Wall time: ([\d.]+) seconds/.exec(text)?.[1]),
  output: text.slice(text.indexOf('Output:\n') + 'Output:\n'.length),
});
const ctx = (callId = 'call-1') => ({ callId });
const sandboxedSpawn = (request: SpawnRequest) => request.argv.includes('--unshare-user');

describe('docs/reference/door.md §15.1 with the real sandbox', () => {
  it('23. runs a command under read-only, never', async () => {
    const { exec, begins } = door('never', { type: 'read-only', network_access: false });
    const result = receipt((await exec.execCommand({ cmd: "echo 'hello'", login: false }, ctx())).text);
    expect(result).toMatchObject({ exitCode: '0', output: 'hello\n' });
    expect(begins()).toEqual(['bwrap']);
  });

  it('24. hides deny-read globs: the secret is absent, the rest is read', async () => {
    const policy: EffectivePolicy = {
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'special', value: 'cwd' }, access: 'write' },
          { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
        ],
      },
      network: 'restricted',
    };
    const { exec, cwd } = door('never', policy);
    writeFileSync(join(cwd, 'secret.env'), 'API_KEY=super-secret');
    writeFileSync(join(cwd, 'notes.txt'), 'plain notes');
    const result = receipt(
      (await exec.execCommand({ cmd: 'cat notes.txt; cat secret.env', login: false }, ctx())).text,
    );
    expect(result.exitCode).not.toBe('0');
    expect(result.output).toContain('plain notes');
    expect(result.output).not.toContain('super-secret');
    expect(result.output).toMatch(/permission denied|operation not permitted|read-only file system/i);
  });
});

describe('docs/reference/door.md §15.3 approvals with the real sandbox', () => {
  it('on-failure: a sandbox error asks to retry without the sandbox, and the retry succeeds', async () => {
    const { exec, cwd, prompts, begins } = door(
      'on-failure',
      { type: 'read-only', network_access: false },
      undefined,
      FAST,
    );
    const text = (await exec.execCommand({ cmd: 'touch created.txt && echo done', login: false }, ctx()))
      .text;
    const result = receipt(text);
    expect(result).toMatchObject({ exitCode: '0', output: 'done\n' });
    // The receipt says the output came from a run outside the sandbox.
    expect(text).toContain(
      'Sandbox: the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox',
    );
    expect(prompts.map((prompt) => prompt.reason)).toEqual(['command failed; retry without sandbox?']);
    expect(prompts[0]).toMatchObject({
      unsandboxed: 'now',
      display_command: 'touch created.txt && echo done',
    });
    expect(existsSync(join(cwd, 'created.txt'))).toBe(true);
    expect(begins()).toEqual(['none']);
  });

  it('never: the failure is reported and nothing is created', async () => {
    const { exec, cwd, prompts } = door('never', { type: 'read-only', network_access: false });
    const result = receipt((await exec.execCommand({ cmd: 'touch created.txt', login: false }, ctx())).text);
    expect(result.exitCode).toBe('1');
    expect(result.output).toMatch(/read-only file system/i);
    expect(prompts).toEqual([]);
    expect(existsSync(join(cwd, 'created.txt'))).toBe(false);
  });

  it('workspace-write, on-failure: a write outside the workspace escalates after approval', async () => {
    const { exec, outside, prompts } = door('on-failure', WORKSPACE_WRITE, undefined, FAST);
    const target = join(outside, 'outside.txt');
    const result = receipt(
      (await exec.execCommand({ cmd: `touch ${target} && echo ok`, login: false }, ctx())).text,
    );
    expect(result.exitCode).toBe('0');
    expect(prompts).toHaveLength(1);
    expect(existsSync(target)).toBe(true);
  });

  it('deny-read keeps the retry sandboxed: no unsandboxed run, the secret stays hidden', async () => {
    const secrets = join(root, 'deny-read-secrets');
    mkdirSync(secrets, { recursive: true });
    writeFileSync(join(secrets, 'key'), 'hidden-key-material');
    const policy: EffectivePolicy = {
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'special', value: 'cwd' }, access: 'write' },
          { path: { type: 'path', path: secrets }, access: 'none' },
        ],
      },
      network: 'restricted',
    };
    const { exec, spawns } = door('on-failure', policy);
    const result = receipt((await exec.execCommand({ cmd: `cat ${secrets}/key`, login: false }, ctx())).text);
    expect(result.output).not.toContain('hidden-key-material');
    expect(spawns.length).toBeGreaterThanOrEqual(1);
    expect(spawns.every(sandboxedSpawn)).toBe(true);
  });
});

describe('the worked example: a denied install, three ways', () => {
  const install = (target: string) => `mkdir -p ${target} && echo installed > ${target}/marker`;

  it('untrusted: asked once, denied in the sandbox, run again without it', async () => {
    const { exec, outside, prompts, spawns, begins } = door('untrusted', WORKSPACE_WRITE, undefined, FAST);
    const target = join(outside, 'pkg');
    const result = receipt((await exec.execCommand({ cmd: install(target), login: false }, ctx())).text);
    expect(result).toMatchObject({ exitCode: '0' });
    expect(result.sessionId).toBeUndefined();
    expect(prompts).toHaveLength(1);
    expect(prompts[0]!.retry).toBe(false);
    expect(spawns.map(sandboxedSpawn)).toEqual([true, false]);
    expect(begins()).toEqual(['none']);
    expect(existsSync(join(target, 'marker'))).toBe(true);
  });

  it('never: one sandboxed run, the denial returned with its text', async () => {
    const { exec, outside, prompts, spawns, begins } = door('never', WORKSPACE_WRITE, undefined, FAST);
    const target = join(outside, 'pkg');
    const response = await exec.execCommand({ cmd: install(target), login: false }, ctx());
    const result = receipt(response.text);
    expect(result.exitCode).toBe('1');
    expect(result.sessionId).toBeUndefined();
    // Returned as the early denial it was, its wall time from the call's start.
    expect(response.result).toMatchObject({ status: 'exited', sandbox_denied: true });
    expect(result.wall).toBeGreaterThan(0);
    expect(result.output).toMatch(/read-only file system/i);
    expect(prompts).toEqual([]);
    expect(spawns.map(sandboxedSpawn)).toEqual([true]);
    // The early denial began and ended like any command: listeners hear of every command.
    expect(begins()).toEqual(['bwrap']);
    expect(existsSync(target)).toBe(false);
  });

  it('late: after sleep 2 the denial is an ordinary receipt, no retry, no session id', async () => {
    const { exec, outside, prompts, spawns } = door('on-failure', WORKSPACE_WRITE);
    const target = join(outside, 'pkg');
    const first = receipt(
      (
        await exec.execCommand(
          { cmd: `sleep 2; ${install(target)}`, login: false, yield_time_ms: 1000 },
          ctx(),
        )
      ).text,
    );
    expect(first.sessionId).toBe('1000');
    expect(first.exitCode).toBeUndefined();
    const last = receipt(
      (await exec.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('poll'))).text,
    );
    expect(last.exitCode).toBe('1');
    expect(last.sessionId).toBeUndefined();
    expect(last.output).toMatch(/read-only file system/i);
    expect(prompts).toEqual([]);
    expect(spawns.map(sandboxedSpawn)).toEqual([true]);
    expect(existsSync(target)).toBe(false);
  });
});

describe('the early-exit window under a stalled event loop', () => {
  const write = (target: string) => `touch ${target}`;

  it('on-failure: a denial seen only after a 300 ms stall is still early, and the retry is offered', async () => {
    const { exec, outside, prompts, spawns } = door('on-failure', WORKSPACE_WRITE, [{ type: 'approved' }], {
      stallAfterSpawnMs: 300,
    });
    const target = join(outside, 'stalled.txt');
    const result = receipt((await exec.execCommand({ cmd: write(target), login: false }, ctx())).text);
    expect(prompts.map((prompt) => prompt.reason)).toEqual(['command failed; retry without sandbox?']);
    expect(spawns.map(sandboxedSpawn)).toEqual([true, false]);
    expect(result).toMatchObject({ exitCode: '0', sessionId: undefined });
    expect(existsSync(target)).toBe(true);
  });

  it('never: the same denial is returned as a denial, not as a late receipt', async () => {
    const { exec, outside, prompts, spawns, begins } = door('never', WORKSPACE_WRITE, [], {
      stallAfterSpawnMs: 300,
    });
    const target = join(outside, 'stalled.txt');
    const response = await exec.execCommand({ cmd: write(target), login: false }, ctx());
    const result = receipt(response.text);
    expect(result).toMatchObject({ exitCode: '1', sessionId: undefined });
    expect(response.result.sandbox_denied).toBe(true);
    // The stall after the spawn is inside the call: the wall time counts it.
    expect(result.wall).toBeGreaterThanOrEqual(0.3);
    expect(result.output).toMatch(/read-only file system/i);
    expect(prompts).toEqual([]);
    expect(spawns.map(sandboxedSpawn)).toEqual([true]);
    // The early denial began and ended like any command: listeners hear of every command.
    expect(begins()).toEqual(['bwrap']);
  });
});

describe('protected paths through the door', () => {
  it('a created .codex is taken away, and the receipt and an event say so', async () => {
    const { exec, cwd } = door('never', WORKSPACE_WRITE);
    const events: UxEvent[] = [];
    exec.onEvent((event) => events.push(event));
    const response = await exec.execCommand(
      { cmd: 'mkdir .codex && echo "x" > .codex/config.toml; sleep 0.2; ls -A', login: false },
      ctx(),
    );
    expect(existsSync(join(cwd, '.codex'))).toBe(false);
    expect(response.text).toMatch(
      /\nSandbox: the command created .*\/\.codex \(agent metadata[^\n]*\); a sandboxed command may not create it, so ux (moved it to|removed it)/,
    );
    expect(response.result?.sandbox_notices).toHaveLength(1);
    // Gone inside the sandbox too, by the time `ls` runs.
    expect(receipt(response.text).output.split('\n')).not.toContain('.codex');
    expect(events.filter((event) => event.type === 'sandbox_notice')).toEqual([
      expect.objectContaining({
        call_id: 'call-1',
        path: join(cwd, '.codex'),
        kind: 'protected_path_undone',
      }),
    ]);
  });
});
