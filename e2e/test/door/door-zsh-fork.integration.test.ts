// ZshFork end to end below the CLI: the real patched zsh, the real execve wrapper and broker, real
// bwrap, and approvals through a scripted reviewer. Each case is one of the ZshFork reference's scenarios.

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createExecPolicy, createOrchestrator, parseRulesFile } from '@ux/orchestrator';
import {
  type ApprovalPolicy,
  type ApprovalRequest,
  type EffectivePolicy,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type UxEvent,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner, zshForkPath } from '@ux/test-utils';
import { createUnifiedExec } from '@ux/unified-exec';
import { type EscalationBroker, startEscalationBroker } from '@ux/zsh-fork';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const local = createLocalSpawner();
const backend = createBwrapSandbox();
let root: string;
let broker: EscalationBroker;
let zsh: string;

beforeAll(async () => {
  zsh = zshForkPath();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-door-zsh-')));
  broker = await startEscalationBroker({ runtimeDir: root });
  await warmUpSpawner(local);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
// Registered after the leak check, so they run first: the broker and the path guard are not leaks.
afterAll(() => backend.close());
afterAll(() => broker.close());

const ZSH_FORK = { shell_tool: true, unified_exec: true, shell_zsh_fork: true, unified_exec_zsh_fork: true };
const DIRECT = { ...ZSH_FORK, shell_zsh_fork: false, unified_exec_zsh_fork: false };

function workspaceWrite(): EffectivePolicy {
  const policy: EffectivePolicy = {
    fileSystem: {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ],
    },
    network: 'restricted',
  };
  return policy;
}

interface DoorOptions {
  rules?: string;
  approvalPolicy?: ApprovalPolicy;
  policy?: EffectivePolicy;
  answers?: ReviewDecision[];
  flags?: typeof ZSH_FORK;
  /** How long the reviewer takes to answer. */
  answerAfterMs?: number;
  /** Counts the intercepted execs the orchestrator decided (the rest the broker answered from its cache). */
  decided?: { count: number };
}

function door(options: DoorOptions = {}) {
  const name = `case-${Math.random().toString(36).slice(2, 8)}`;
  const cwd = join(root, name, 'workspace');
  // A HOME of its own, empty: no start-up file of this machine runs in these shells.
  const home = join(root, name, 'home');
  mkdirSync(home, { recursive: true });
  const outside = join(root, name, 'outside');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outside, { recursive: true });
  const prompts: ApprovalRequest[] = [];
  const answers = options.answers ?? [{ type: 'approved' }];
  const flags = options.flags ?? ZSH_FORK;
  const orchestrator = createOrchestrator({
    sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
    approvalPolicy: options.approvalPolicy ?? 'on-request',
    policy: options.policy ?? workspaceWrite(),
    execPolicy: createExecPolicy(parseRulesFile(options.rules ?? '', 'test.rules')),
    reviewer: {
      specificationVersion: REVIEWER_SPECIFICATION_VERSION,
      id: 'scripted',
      review: async (request) => {
        prompts.push(request);
        if (options.answerAfterMs) await new Promise((resolve) => setTimeout(resolve, options.answerAfterMs));
        return answers[Math.min(prompts.length - 1, answers.length - 1)]!;
      },
    },
  });
  if (options.decided) {
    const counter = options.decided;
    const decideExec = orchestrator.decideExec;
    orchestrator.decideExec = (request) => {
      counter.count += 1;
      return decideExec(request);
    };
  }
  const exec = createUnifiedExec({
    orchestrator,
    spawner: local,
    toolPlan: planTools({
      flags,
      platform: 'linux',
      zshFork: { zshPath: zsh, execveWrapperPath: broker.wrapperPath },
    }),
    cwd,
    userShell: '/bin/bash',
    deterministicIds: true,
    baseEnvironment: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
    escalationBroker: broker,
  });
  const events: UxEvent[] = [];
  exec.onEvent((event) => events.push(event));
  onTestFinished(() => exec.shutdown());
  return { exec, cwd, outside, prompts, events };
}

const receipt = (text: string) => ({
  exitCode: /Process exited with code (-?\d+)/.exec(text)?.[1],
  sessionId: /Process running with session ID (\d+)/.exec(text)?.[1],
  output: text.slice(text.indexOf('Output:\n') + 'Output:\n'.length),
});
const ctx = (callId = 'call-1') => ({ callId });

describe('ZshFork: the broker answers repeats itself, and nothing stale or forged gets through', () => {
  it('a loop of hundreds of execs asks once per distinct exec; a forbidden program mid-loop is caught every time', async () => {
    const decided = { count: 0 };
    const fork = door({ rules: 'prefix_rule(pattern=["cat"], decision="forbidden")\n', decided });
    writeFileSync(join(fork.cwd, 'f'), 'secret\n');
    // `$C`: no static parser sees the cat, only the intercepted exec does. From inside the sandbox the
    // script also sends garbage on its broker socket.
    const script = [
      'C=/bin/cat',
      'for i in {1..300}; do /bin/true; if (( i % 100 == 0 )); then $C f; fi; done',
      'for i in {1..50}; do print -rn -- junk$i >&$UX_ESCALATE_SOCKET; done',
      '$C f; /bin/true; echo done',
    ].join('; ');
    const text = (await fork.exec.execCommand({ cmd: script, login: false, yield_time_ms: 60_000 }, ctx()))
      .text;
    const { exitCode, output } = receipt(text);
    expect(exitCode).toBe('0');
    expect(output).not.toContain('secret');
    expect(output.match(/Execution denied: Execution forbidden by policy/g)).toHaveLength(4);
    expect(output).toContain('done');
    // /bin/true once, /bin/cat each time (a denial is never cached).
    expect(decided.count).toBe(1 + 4);
  });

  it('a rule approved mid-session reaches execs of a command already running', async () => {
    const fork = door({
      answers: [{ type: 'approved_execpolicy_amendment', amendment: ['/usr/bin/touch'] }],
    });
    const target = join(fork.outside, 'x');
    // Runs `touch` outside the workspace (denied by the sandbox, in place, cached) until it works.
    const loop = receipt(
      (
        await fork.exec.execCommand(
          {
            cmd: `until [[ -e ${target} ]]; do /usr/bin/touch ${target} 2>/dev/null; /bin/sleep 0.02; done; echo escaped`,
            login: false,
            yield_time_ms: 300,
          },
          ctx('call-loop'),
        )
      ).text,
    );
    expect(loop.sessionId).toBeDefined();
    expect(existsSync(target)).toBe(false);
    // Another call asks for a rule for touch; approved for good, it applies to the running loop too.
    const approved = await fork.exec.execCommand(
      {
        cmd: '/usr/bin/touch --version',
        login: false,
        sandbox_permissions: 'require_escalated',
        justification: 'touch outside the workspace',
        prefix_rule: ['/usr/bin/touch'],
      },
      ctx('call-rule'),
    );
    expect(receipt(approved.text).exitCode).toBe('0');
    expect(fork.prompts[0]?.proposed_execpolicy_amendment).toEqual(['/usr/bin/touch']);
    let output = '';
    for (let i = 0; i < 100 && !output.includes('escaped'); i++) {
      const polled = await fork.exec.writeStdin(
        { session_id: Number(loop.sessionId), chars: '', yield_time_ms: 500 },
        ctx('call-poll'),
      );
      output += receipt(polled.text).output;
    }
    expect(output).toContain('escaped');
    expect(existsSync(target)).toBe(true);
  });
});

describe('ZshFork: policy applies to every program a script runs', () => {
  it('denies an `rm` no static parser can see; the script goes on; direct mode removes the file', async () => {
    const rules = 'prefix_rule(pattern=["rm"], decision="forbidden")\n';
    const fork = door({ rules });
    writeFileSync(join(fork.cwd, 'x'), 'keep me');
    const text = (await fork.exec.execCommand({ cmd: 'R=rm; echo a; $R -f x; echo b', login: false }, ctx()))
      .text;
    const result = receipt(text);
    // The denial is the wrapper's stderr, `a` and `b` the shell's stdout: two pipes, so only each
    // stream's own order is fixed.
    const lines = result.output.split('\n');
    expect(lines.filter((line) => line === 'a' || line === 'b')).toEqual(['a', 'b']);
    expect(
      lines.filter((line) => /^Execution denied: Execution forbidden by policy: .*rm/.test(line)),
    ).toHaveLength(1);
    expect(lines).toHaveLength(4);
    expect(existsSync(join(fork.cwd, 'x'))).toBe(true);

    const direct = door({ rules, flags: DIRECT });
    writeFileSync(join(direct.cwd, 'x'), 'gone');
    const plain = receipt(
      (await direct.exec.execCommand({ cmd: 'R=rm; echo a; $R -f x; echo b', login: false }, ctx())).text,
    );
    expect(plain.output).toBe('a\nb\n');
    expect(existsSync(join(direct.cwd, 'x'))).toBe(false);
  });

  it("escalates an allowed `touch` outside the workspace; the shell's own redirection stays blocked", async () => {
    const { exec, outside } = door({ rules: 'prefix_rule(pattern=["touch"], decision="allow")\n' });
    const text = (
      await exec.execCommand(
        { cmd: `touch ${outside}/f; echo x > ${outside}/g; echo done`, login: false },
        ctx(),
      )
    ).text;
    expect(existsSync(join(outside, 'f'))).toBe(true);
    expect(existsSync(join(outside, 'g'))).toBe(false);
    expect(receipt(text).output).toMatch(/read-only file system/i);
    expect(text).toContain(`Sandbox: ran \`touch ${outside}/f\` OUTSIDE the sandbox, as policy allows`);
  });

  it('escalation keeps working with the network on, where the filter refuses socket(AF_UNIX)', async () => {
    const { exec, outside } = door({
      rules: 'prefix_rule(pattern=["touch"], decision="allow")\n',
      policy: { ...workspaceWrite(), network: 'enabled' },
    });
    const text = (
      await exec.execCommand(
        {
          cmd: `touch ${outside}/f; python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>&1 | tail -1`,
          login: false,
        },
        ctx(),
      )
    ).text;
    expect(existsSync(join(outside, 'f'))).toBe(true);
    expect(text).toContain(`Sandbox: ran \`touch ${outside}/f\` OUTSIDE the sandbox, as policy allows`);
    expect(receipt(text).output).toContain('PermissionError: [Errno 1] Operation not permitted');
  });

  it('asks for each prompted exec with its own approval id, after the command itself was approved', async () => {
    const { exec, prompts, events, cwd } = door({
      rules: 'prefix_rule(pattern=["touch"], decision="prompt")\n',
      approvalPolicy: 'untrusted',
    });
    const text = (await exec.execCommand({ cmd: 'touch one; touch two', login: false }, ctx())).text;
    expect(receipt(text).exitCode).toBe('0');
    // The whole command first (untrusted), then each intercepted touch.
    expect(prompts.map((prompt) => prompt.approval_id === undefined)).toEqual([true, false, false]);
    const ids = prompts.slice(1).map((prompt) => prompt.approval_id);
    expect(new Set(ids).size).toBe(2);
    expect(prompts[1]).toMatchObject({
      available_decisions: ['approved', 'abort'],
      display_command: 'touch one',
    });
    expect(events.filter((event) => event.type === 'exec_approval_request')).toHaveLength(3);
    expect(existsSync(join(cwd, 'one'))).toBe(true);
  });

  it('abort at a per-exec prompt refuses the program, ends the command and stops the turn; under never it is denied without a prompt', async () => {
    const rules = 'prefix_rule(pattern=["touch"], decision="prompt")\n';
    const aborted = door({ rules, answers: [{ type: 'abort' }] });
    const response = await aborted.exec.execCommand(
      // Through a variable: the whole command asks nobody, the intercepted touch does.
      { cmd: 'T=touch; $T one; echo ran > after', login: false },
      ctx(),
    );
    expect(response.aborted).toBe(true);
    expect(response.text).toMatch(/^aborted by user after [\d.]+s\n/);
    expect(response.result?.session_id).toBeUndefined();
    expect(response.result?.next_step).toContain('the command was ended');
    expect(aborted.prompts.map((prompt) => prompt.approval_id !== undefined)).toEqual([true]);
    // The command ends: its End event comes, and nothing after the refused program ran.
    await new Promise<void>((resolve) => {
      const check = () => {
        if (aborted.exec.processes().every((process) => !process.running)) resolve();
        else setTimeout(check, 20);
      };
      check();
    });
    expect(existsSync(join(aborted.cwd, 'one'))).toBe(false);
    expect(existsSync(join(aborted.cwd, 'after'))).toBe(false);

    const never = door({ rules, approvalPolicy: 'never' });
    const text = (await never.exec.execCommand({ cmd: 'T=touch; $T one; echo $?', login: false }, ctx()))
      .text;
    expect(receipt(text).output).toContain('Execution denied: Execution forbidden by policy');
    expect(receipt(text).output).toMatch(/\n1\n$/);
    expect(never.prompts).toEqual([]);
  });

  it('keeps deny-read for an exec an allow rule vouches for', async () => {
    const secrets = join(root, 'zsh-secrets');
    mkdirSync(secrets, { recursive: true });
    writeFileSync(join(secrets, 'key'), 'hidden-key-material');
    const policy = workspaceWrite();
    if (policy.fileSystem.kind === 'restricted')
      policy.fileSystem.entries.push({ path: { type: 'path', path: secrets }, access: 'none' });
    const { exec } = door({ rules: 'prefix_rule(pattern=["cat"], decision="allow")\n', policy });
    const text = (await exec.execCommand({ cmd: `cat ${secrets}/key`, login: false }, ctx())).text;
    expect(receipt(text).output).not.toContain('hidden-key-material');
  });

  it('intercepts execs in $(…), in a pipeline and in a nested zsh -c', async () => {
    const { exec } = door({ rules: 'prefix_rule(pattern=["rm"], decision="forbidden")\n' });
    const text = (
      await exec.execCommand(
        // Through a variable, so the whole-command check cannot see the rm (it refuses literal ones).
        {
          cmd: 'R=rm; v=$($R -f a 2>&1); echo "[$v]"; echo hi | $R -f b; R=rm zsh -c \'$R -f c\'',
          login: false,
        },
        ctx(),
      )
    ).text;
    const denials = receipt(text).output.match(/Execution denied/g) ?? [];
    expect(denials).toHaveLength(3);
  });

  it('what it cannot see stays sandboxed: python subprocesses, unset EXEC_WRAPPER', async () => {
    const { exec, outside } = door({ rules: 'prefix_rule(pattern=["touch"], decision="allow")\n' });
    const text = (
      await exec.execCommand(
        {
          cmd: `python3 -c 'import subprocess; subprocess.run(["touch", "${outside}/p"])'; unset EXEC_WRAPPER; touch ${outside}/h; echo end`,
          login: false,
        },
        ctx(),
      )
    ).text;
    expect(receipt(text).output).toContain('end');
    expect(existsSync(join(outside, 'p'))).toBe(false);
    expect(existsSync(join(outside, 'h'))).toBe(false);
  });

  it('an unknown command exits 127 without a prompt', async () => {
    const { exec, prompts } = door({ approvalPolicy: 'untrusted', answers: [{ type: 'approved' }] });
    const text = (await exec.execCommand({ cmd: 'no-such-command-ux; echo $?', login: false }, ctx())).text;
    expect(receipt(text).output).toMatch(/127\n$/);
    // The one prompt is the whole command's, under untrusted.
    expect(prompts.filter((prompt) => prompt.approval_id !== undefined)).toEqual([]);
  });

  it('an escalated exec gets no LD_PRELOAD, and a workspace-built ./touch is not escalated', async () => {
    const { exec, cwd, outside } = door({
      rules:
        'prefix_rule(pattern=["env"], decision="allow")\nprefix_rule(pattern=["touch"], decision="allow")\n',
    });
    mkdirSync(join(cwd, 'bin'));
    copyFileSync('/usr/bin/touch', join(cwd, 'bin', 'touch'));
    chmodSync(join(cwd, 'bin', 'touch'), 0o755);
    const text = (
      await exec.execCommand(
        {
          cmd: `LD_PRELOAD=/nonexistent.so GIT_SSH_COMMAND=evil env > env.txt 2>/dev/null; ./bin/touch ${outside}/built`,
          login: false,
        },
        ctx(),
      )
    ).text;
    expect(receipt(text).exitCode).toBeDefined();
    const seen = readFileSync(join(cwd, 'env.txt'), 'utf8');
    expect(seen).toMatch(/^PATH=/m);
    expect(seen).not.toMatch(/^LD_PRELOAD=/m);
    expect(seen).not.toMatch(/^GIT_SSH_COMMAND=/m);
    expect(existsSync(join(outside, 'built'))).toBe(false);
  });

  it('Ctrl-C through write_stdin reaches a long escalated command in a terminal session', async () => {
    const { exec } = door({ rules: 'prefix_rule(pattern=["sleep"], decision="allow")\n' });
    const started = receipt(
      (
        await exec.execCommand(
          { cmd: 'sleep 30; echo status=$?', tty: true, yield_time_ms: 500, login: false },
          ctx(),
        )
      ).text,
    );
    expect(started.sessionId).toBeDefined();
    const after = (
      await exec.writeStdin(
        { session_id: Number(started.sessionId), chars: '\u0003', yield_time_ms: 2000 },
        ctx('call-2'),
      )
    ).text;
    expect(after).toMatch(/status=130|Process exited with code 130/);
  });

  it('ending a session ends the escalated programs it started', async () => {
    const { exec } = door({ rules: 'prefix_rule(pattern=["sleep"], decision="allow")\n' });
    const marker = `${40 + Math.floor(Math.random() * 1000) / 1000}`;
    const started = receipt(
      // Not every command has an allow rule, so the command itself is sandboxed and `sleep` escalates.
      (
        await exec.execCommand(
          { cmd: `echo start; sleep ${marker}`, yield_time_ms: 500, login: false },
          ctx(),
        )
      ).text,
    );
    expect(started.sessionId).toBeDefined();
    const running = () => spawnSync('pgrep', ['-f', `sleep ${marker}$`], { encoding: 'utf8' }).stdout.trim();
    // Escalated: the broker, outside the sandbox, is its parent.
    const escalated = spawnSync('pgrep', ['-P', String(broker.pid), '-f', `sleep ${marker}$`], {
      encoding: 'utf8',
    }).stdout.trim();
    expect(escalated).not.toBe('');
    await exec.cleanBackgroundTerminals();
    const deadline = Date.now() + 15_000;
    while (running() !== '' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running()).toBe('');
  });

  it("shell_command's timeout stops while a per-exec approval waits", async () => {
    const { exec, prompts } = door({
      rules: 'prefix_rule(pattern=["touch"], decision="prompt")\n',
      flags: { ...ZSH_FORK, unified_exec_zsh_fork: false },
      answerAfterMs: 1500,
    });
    const text = (
      await exec.shellCommand({ command: 'T=touch; $T slow; echo finished', timeout_ms: 1000 }, ctx())
    ).text;
    expect(prompts).toHaveLength(1);
    expect(text).toMatch(/^Exit code: 0\n/);
    expect(text).toContain('finished');
  });

  it('shell_zsh_fork alone: shell_command goes through the fork with the same rules', async () => {
    const { exec, cwd } = door({
      rules: 'prefix_rule(pattern=["rm"], decision="forbidden")\n',
      flags: { ...ZSH_FORK, unified_exec_zsh_fork: false },
    });
    writeFileSync(join(cwd, 'x'), 'keep');
    expect(exec.tools.map((tool) => tool.name)).toEqual(['shell_command']);
    const text = (await exec.shellCommand({ command: 'R=rm; $R -f x; echo after' }, ctx())).text;
    expect(text).toContain('Execution denied');
    expect(text).toContain('after');
    expect(existsSync(join(cwd, 'x'))).toBe(true);
  });
});
