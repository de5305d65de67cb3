import {
  type ControlClient,
  ControlError,
  type ControlHello,
  connectControl,
  listControlProcesses,
} from '@ux/control';
import { readableText, visibleJson } from '@ux/protocol-utils';
import { decisionWord, type PendingApproval } from './approval-inbox.js';
import type { Io } from './io.js';
import { parseOptions } from './parse-options.js';
import type { Terminal } from './terminal.js';
import { UsageError } from './usage-error.js';

export const APPROVALS_HELP = `Usage: ux approvals [--watch] [--json]
       ux approvals answer ID approve|approve-session|approve-prefix|deny|deny-session|abort

The approvals inbox: the questions every ux process of yours (ux mcp, ux exec) is waiting on a person
for, with the same text and choices as the terminal prompt, answered from here. A question goes to the
inbox when approvals_via in config.toml says so (default "client-then-inbox": when the MCP client cannot
show questions, or answers them itself faster than a person could).

On a terminal each pending question is shown and one key answers it: [y] approve once, [a] approve for
the session, [p] always allow the prefix, [n] deny, [x] abort (stop waiting for the command), and for a
host [d] deny it for the session; [s] skips to the next question, q or Ctrl-C leaves (the questions stay
pending). Without a terminal the questions are listed.

Options:
  --watch      keep waiting for new questions (from processes started later too), ringing the
               terminal bell for each; with --json, one JSON line per event (added, removed)
  --json       the pending questions as JSON: {"approvals": [{id, pid, kind, headline, details,
               choices, …}]}
  -h, --help   this help

ux approvals answer ID DECISION answers one question from a script; ID is PID:N as listed (unique
across processes). It fails (exit 1) for an id no process has pending and for a decision the question
does not offer, saying which it offers.
`;

const HELP_COMMAND = 'ux approvals --help';
const DECISION_WORDS = ['approve', 'approve-session', 'approve-prefix', 'deny', 'deny-session', 'abort'];
/** How often `--watch` looks for ux processes started after it. */
const WATCH_SCAN_MS = 1000;
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BELL = '\u0007';

/** A question as `ux approvals` shows it: with the process that asks. */
export interface ListedApproval extends PendingApproval {
  pid: number;
  process: { kind: string; cwd: string; clientName?: string };
}

export async function approvalsCommand(args: string[], io: Io): Promise<number> {
  if (args[0] === 'answer') return answerCommand(args.slice(1), io);
  const { values, positionals } = parseOptions(
    args,
    { watch: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    HELP_COMMAND,
  );
  if (values.help) {
    io.stdout(APPROVALS_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(
      `unexpected argument "${positionals[0]}"; to answer one: ux approvals answer ID DECISION`,
      HELP_COMMAND,
    );
  if (values.watch) return watch(io, Boolean(values.json));
  const approvals = await pendingApprovals();
  if (values.json) {
    io.stdout(`${visibleJson({ approvals })}\n`);
    return 0;
  }
  const terminal = io.terminal?.();
  if (!terminal) {
    io.stdout(approvals.length === 0 ? 'no pending approval questions\n' : approvals.map(listed).join('\n'));
    return 0;
  }
  try {
    if (approvals.length === 0) {
      io.stdout('no pending approval questions (ux approvals --watch waits for them)\n');
      return 0;
    }
    for (const approval of approvals) {
      const outcome = await askOne(terminal, approval, new AbortController().signal);
      if (outcome === 'quit') break;
    }
    return 0;
  } finally {
    terminal.close();
  }
}

/** Every pending question of every ux process, oldest process first. */
async function pendingApprovals(): Promise<ListedApproval[]> {
  const approvals: ListedApproval[] = [];
  for (const hello of await listControlProcesses()) {
    let client: ControlClient | undefined;
    try {
      client = await connectControl(hello.pid);
      const result = (await client.call('approvals.list')) as { approvals?: PendingApproval[] };
      approvals.push(...(result.approvals ?? []).map((approval) => withProcess(approval, hello)));
    } catch {
      // A process that went away, or serves no inbox (an exec-server): nothing to answer there.
    } finally {
      client?.close();
    }
  }
  return approvals;
}

function withProcess(approval: PendingApproval, hello: ControlHello): ListedApproval {
  return {
    ...approval,
    pid: hello.pid,
    process: {
      kind: hello.kind,
      cwd: hello.cwd,
      ...(hello.clientName === undefined ? {} : { clientName: hello.clientName }),
    },
  };
}

/** The question as the terminal prompt shows it, and who asks. */
function questionText(approval: ListedApproval): string {
  const width = Math.max(...approval.details.map((detail) => detail.label.length));
  const who = `${approval.process.kind}${approval.process.clientName ? ` (${readableText(approval.process.clientName)})` : ''} pid ${approval.pid}`;
  return [
    '',
    `[${approval.id}] ${who}, ${approval.kind.replaceAll('_', ' ')}, asked ${age(approval.askedAt)} ago${
      approval.expiresAt === undefined ? '' : `, withdrawn in ${age(Date.now(), approval.expiresAt)}`
    }`,
    `ux: ${approval.headline}`,
    ...approval.details.map((detail) => `  ${`${detail.label}:`.padEnd(width + 1)} ${detail.text}`),
    `  ${approval.choices.map((choice) => `[${choice.key}] ${choice.label}`).join('   ')}`,
    ...(approval.rule ? [`  [p] ${approval.rule}`] : []),
    '',
  ].join('\n');
}

/** The list without a terminal: the question and how to answer it from a script. */
function listed(approval: ListedApproval): string {
  return `${questionText(approval).trimStart()}  answer: ux approvals answer ${approval.id} ${approval.choices
    .map((choice) => decisionWord(choice.value))
    .join('|')}\n`;
}

function age(from: number, to = Date.now()): string {
  const seconds = Math.max(0, Math.round((to - from) / 1000));
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

/**
 * Shows one question and answers it with one key. `signal` aborts when the question leaves the inbox
 * meanwhile (answered elsewhere, withdrawn). `quit`: the person left.
 */
async function askOne(
  terminal: Terminal,
  approval: ListedApproval,
  signal: AbortSignal,
): Promise<'answered' | 'skipped' | 'gone' | 'quit'> {
  terminal.write(questionText(approval));
  const keys = approval.choices.map((choice) => choice.key).join('/');
  let prompt = `Press ${keys} (s skips, q leaves): `;
  for (;;) {
    const key = await terminal.readKey(prompt, signal);
    if (key === null) {
      terminal.write('\n');
      if (signal.aborted) {
        terminal.write(`${approval.id} is no longer pending (answered elsewhere, withdrawn or cancelled)\n`);
        return 'gone';
      }
      return 'quit';
    }
    if (key === CTRL_C || key === CTRL_D || key === 'q') {
      terminal.write('left; the question stays pending\n');
      return 'quit';
    }
    if (key === 's') {
      terminal.write('skipped\n');
      return 'skipped';
    }
    const choice = approval.choices.find((c) => c.key === key.toLowerCase());
    if (!choice) {
      prompt = `\r\x1b[K${visibleJson(key)} is not an answer; press ${keys} (s skips, q leaves): `;
      continue;
    }
    try {
      await sendAnswer(approval.pid, approval.id, choice.value);
      terminal.write(`${choice.key}: ${choice.label}\n`);
      return 'answered';
    } catch (error) {
      terminal.write(`\nux: ${error instanceof Error ? error.message : String(error)}\n`);
      return 'gone';
    }
  }
}

async function sendAnswer(
  pid: number,
  id: string,
  decision: string,
): Promise<{ id: string; decision: string; label: string }> {
  let client: ControlClient;
  try {
    client = await connectControl(pid);
  } catch (error) {
    const missing =
      (ControlError.isInstance(error) && error.controlCode === 'not_found') ||
      (error as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing)
      throw new ControlError(
        'not_found',
        `no ux process ${pid} is running (or it serves no control socket), so question ${id} is not pending; ux approvals lists the pending ones`,
      );
    throw error;
  }
  try {
    return (await client.call('approvals.answer', { id, decision })) as {
      id: string;
      decision: string;
      label: string;
    };
  } finally {
    client.close();
  }
}

/** `ux approvals answer ID DECISION`. */
async function answerCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    HELP_COMMAND,
  );
  if (values.help) {
    io.stdout(APPROVALS_HELP);
    return 0;
  }
  const [id, decision, extra] = positionals;
  if (id === undefined || decision === undefined)
    throw new UsageError(
      `ux approvals answer needs an ID and a decision (${DECISION_WORDS.join('|')}); ux approvals lists the pending questions`,
      HELP_COMMAND,
    );
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, HELP_COMMAND);
  const match = /^([1-9][0-9]{0,9}):([1-9][0-9]{0,9})$/.exec(id);
  if (!match)
    throw new UsageError(
      `"${readableText(id)}" is not a question id: ids are PID:N, as ux approvals lists them`,
      HELP_COMMAND,
    );
  const word = decision.replaceAll('_', '-');
  if (!DECISION_WORDS.includes(word))
    throw new UsageError(
      `unknown decision "${readableText(decision)}"; one of ${DECISION_WORDS.join(', ')}`,
      HELP_COMMAND,
    );
  try {
    const answer = await sendAnswer(Number(match[1]), id, word);
    io.stdout(values.json ? `${visibleJson(answer)}\n` : `${id}: ${answer.label}\n`);
    return 0;
  } catch (error) {
    io.stderr(`ux: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/**
 * `--watch`: every process's inbox, and processes that start later; each new question rings the bell
 * and (on a terminal) is asked, one at a time. Ends with Ctrl-C (or q at a question).
 */
async function watch(io: Io, json: boolean): Promise<number> {
  const terminal = json ? undefined : io.terminal?.();
  const clients = new Map<number, ControlClient>();
  const queue: ListedApproval[] = [];
  const gone = new Map<string, AbortController>();
  let wake: (() => void) | undefined;
  let stopped = false;
  let resolveStopped: () => void = () => {};
  const stoppedPromise = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  const stop = () => {
    stopped = true;
    resolveStopped();
    wake?.();
  };
  const added = (approval: ListedApproval) => {
    if (json) io.stdout(`${visibleJson({ event: 'added', approval })}\n`);
    else if (!terminal) io.stdout(`${BELL}${listed(approval)}\n`);
    else {
      queue.push(approval);
      io.stdout(BELL);
      wake?.();
    }
  };
  const removed = (params: { id: string; reason: string; decision?: string }, pid: number) => {
    if (json) io.stdout(`${visibleJson({ event: 'removed', pid, ...params })}\n`);
    const at = queue.findIndex((approval) => approval.id === params.id);
    if (at >= 0) queue.splice(at, 1);
    gone.get(params.id)?.abort();
  };
  const scan = async () => {
    for (const hello of await listControlProcesses().catch(() => [])) {
      if (clients.has(hello.pid) || stopped) continue;
      try {
        const client = await connectControl(hello.pid);
        clients.set(hello.pid, client);
        client.onClose(() => clients.delete(hello.pid));
        client.on('approvals.added', (params) => added(withProcess(params as PendingApproval, hello)));
        client.on('approvals.removed', (params) =>
          removed(params as { id: string; reason: string; decision?: string }, hello.pid),
        );
        const result = (await client.call('approvals.watch')) as { approvals?: PendingApproval[] };
        for (const approval of result.approvals ?? []) added(withProcess(approval, hello));
      } catch {
        // Gone meanwhile, or no inbox there.
      }
    }
  };
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  await scan();
  const timer = setInterval(() => void scan(), WATCH_SCAN_MS);
  if (!terminal) io.stderr('ux approvals: watching for approval questions; Ctrl-C ends\n');
  try {
    if (!terminal) {
      await stoppedPromise;
      return 0;
    }
    terminal.write('ux approvals: watching for approval questions; q or Ctrl-C at a question leaves\n');
    while (!stopped) {
      const next = queue.shift();
      if (!next) {
        // Ctrl-C while nothing is asked: the terminal is not reading keys, so the signal ends it.
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      const controller = new AbortController();
      gone.set(next.id, controller);
      const outcome = await askOne(terminal, next, controller.signal);
      gone.delete(next.id);
      if (outcome === 'quit') break;
    }
    return 0;
  } finally {
    clearInterval(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    for (const client of clients.values()) client.close();
    terminal?.close();
  }
}
