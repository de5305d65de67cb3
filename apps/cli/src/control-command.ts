import { type ControlClient, ControlError, connectControl, listControlProcesses } from '@ux/control';
import { readableText } from '@ux/protocol-utils';
import { type AttachPort, attachPort, attachStatus } from './attach-session.js';
import {
  type ControlSession,
  commandText,
  type PsProcess,
  parseSessionTarget,
  renderPs,
  resolveSessionTarget,
} from './control-sessions.js';
import type { Io } from './io.js';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

export const PS_HELP = `Usage: ux ps [--json]

Every live ux process of yours (ux mcp, ux exec, ux exec-server): pid, kind, the MCP client's name,
working directory, when it started; and each one's sessions: PID:SESSION, state (running, waiting
for input, exited with code N), idle time, tty or pipe, environment, sandbox, command and its last
output lines. They are reached through each process's control socket (docs/control-plane.md), which
no sandboxed command can reach.

Options:
  --json       the same as JSON: an array of processes, each with its sessions
  -h, --help   this help
`;

export const ATTACH_HELP = `Usage: ux attach PID:SESSION
       ux attach SESSION          (when only one ux process has that session)

Watches a session of another ux process (one an agent started through ux mcp, say) from this
terminal: its output live, your keys go to it as the model's write_stdin would send them (they land in
the session's output, so the model sees on its next poll what you did). Ctrl-C interrupts it, Ctrl-]
detaches and leaves it running. A session without a terminal (pipes) gets only Ctrl-C. ux ps lists
the sessions.

Options:
  -h, --help   this help
`;

export const KILL_HELP = `Usage: ux kill PID:SESSION
       ux kill SESSION            (when only one ux process has that session)

Ends one session of a ux process: its process group gets SIGTERM, then SIGKILL after a short grace.
The ux process and its other sessions go on; the model's next poll sees that the session exited.

Options:
  -h, --help   this help
`;

/** `ux ps`, `ux attach`, `ux kill`: the person's side of the control plane. */
export async function controlCommand(
  name: 'ps' | 'attach' | 'kill',
  args: string[],
  io: Io,
): Promise<number> {
  if (name === 'ps') return await psCommand(args, io);
  return name === 'attach' ? await attachCommand(args, io) : await killCommand(args, io);
}

async function psCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    'ux ps --help',
  );
  if (values.help) return help(io, PS_HELP);
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${readableText(positionals[0] ?? '')}"`, 'ux ps --help');
  const processes = await listAll();
  io.stdout(values.json ? `${JSON.stringify(processes, null, 2)}\n` : renderPs(processes));
  return 0;
}

async function attachCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { help: { type: 'boolean', short: 'h' } },
    'ux attach --help',
  );
  if (values.help) return help(io, ATTACH_HELP);
  if (positionals.length > 1)
    throw new UsageError(`unexpected argument "${readableText(positionals[1] ?? '')}"`, 'ux attach --help');
  const target = parseSessionTarget(positionals[0], 'attach');
  const process = await findProcess(target, io);
  if (!process) return 1;
  const terminal = io.terminal?.();
  if (!terminal) {
    io.stderr('ux attach: needs a terminal (stdin and stdout a tty); ux ps shows the last lines\n');
    return 1;
  }
  const client = await connectControl(process.pid);
  try {
    const port = await controlAttachPort(client, target.session);
    const label = `${process.pid}:${target.session}`;
    // A prompt waiting on its line (a REPL's `>>> `) is shown under the status, so the person sees
    // where the keys go; output that ended with its line is not repeated.
    const prompt =
      port.session.state === 'running' && port.session.lastLineOpen
        ? port.session.lastLines.at(-1)
        : undefined;
    if (port.session.state === 'running') {
      terminal.write(attachStatus({ sessionId: target.session, tty: port.session.tty, label }));
      if (prompt) terminal.write(prompt);
    }
    const outcome = await attachPort(
      port,
      {
        sessionId: target.session,
        tty: port.session.tty,
        startedAt: port.session.startedAt,
        label,
        announced: true,
        atLineStart: !prompt,
      },
      terminal,
    );
    return outcome.kind === 'exited' ? 0 : outcome.kind === 'lost' ? 1 : 0;
  } catch (error) {
    io.stderr(`ux attach: ${readableText(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  } finally {
    client.close();
    terminal.close();
  }
}

async function killCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { help: { type: 'boolean', short: 'h' } },
    'ux kill --help',
  );
  if (values.help) return help(io, KILL_HELP);
  if (positionals.length > 1)
    throw new UsageError(`unexpected argument "${readableText(positionals[1] ?? '')}"`, 'ux kill --help');
  const target = parseSessionTarget(positionals[0], 'kill');
  const process = await findProcess(target, io);
  if (!process) return 1;
  const client = await connectControl(process.pid);
  try {
    const session = process.sessions.find((candidate) => candidate.id === target.session);
    await client.call('sessions.kill', { session: target.session });
    io.stdout(
      `ux: ended session ${process.pid}:${target.session}${session ? ` (${readableText(commandText(session.command))})` : ''}\n`,
    );
    return 0;
  } catch (error) {
    io.stderr(`ux kill: ${readableText(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  } finally {
    client.close();
  }
}

function help(io: Io, text: string): number {
  io.stdout(text);
  return 0;
}

/** Every live ux process and its sessions; one that goes away meanwhile is listed with why. */
async function listAll(): Promise<PsProcess[]> {
  const hellos = await listControlProcesses();
  return await Promise.all(
    hellos.map(async (hello): Promise<PsProcess> => {
      let client: ControlClient | undefined;
      try {
        client = await connectControl(hello.pid);
        const answer = (await client.call('sessions.list')) as { sessions?: ControlSession[] };
        return { ...hello, sessions: Array.isArray(answer?.sessions) ? answer.sessions : [] };
      } catch (error) {
        return { ...hello, sessions: [], error: error instanceof Error ? error.message : String(error) };
      } finally {
        client?.close();
      }
    }),
  );
}

async function findProcess(
  target: ReturnType<typeof parseSessionTarget>,
  io: Io,
): Promise<PsProcess | undefined> {
  try {
    return resolveSessionTarget(target, await listAll());
  } catch (error) {
    io.stderr(`ux: ${readableText(error instanceof Error ? error.message : String(error))}\n`);
    return undefined;
  }
}

/**
 * Attach through a control socket: `sessions.attach` subscribes (events that come before attach
 * watches are kept for it), keys go by `sessions.write`.
 */
async function controlAttachPort(
  client: ControlClient,
  id: number,
): Promise<AttachPort & { session: ControlSession }> {
  type Listener = Parameters<AttachPort['watch']>[0];
  let listener: Listener | undefined;
  const early: ((to: Listener) => void)[] = [];
  const deliver = (event: (to: Listener) => void) => (listener ? event(listener) : early.push(event));
  client.on('sessions.output', (params) => {
    const { session, data } = params as { session?: unknown; data?: unknown };
    if (session === id && typeof data === 'string') {
      const chunk = Buffer.from(data, 'base64');
      deliver((to) => to.output(chunk));
    }
  });
  client.on('sessions.exit', (params) => {
    const { session, exitCode } = params as { session?: unknown; exitCode?: unknown };
    if (session === id) deliver((to) => to.exit(typeof exitCode === 'number' ? exitCode : -1));
  });
  client.onClose(() => deliver((to) => to.lost('its ux process ended or closed the connection')));
  const answer = (await client.call('sessions.attach', { session: id })) as { session?: ControlSession };
  const session = answer?.session;
  if (!session || typeof session.tty !== 'boolean')
    throw new ControlError('failed', 'the ux process answered sessions.attach without the session');
  return {
    session,
    watch(to) {
      listener = to;
      for (const event of early.splice(0)) event(to);
      return () => {
        listener = undefined;
      };
    },
    running: () => session.state === 'running',
    async send(chars) {
      await client.call('sessions.write', {
        session: id,
        data: Buffer.from(chars, 'utf8').toString('base64'),
      });
    },
    async finish() {
      // Its last lines, not a poll: the output stays for the model's next write_stdin.
      const lines = session.lastLines.join('\n');
      return {
        output: lines === '' ? '' : `${lines}\n`,
        exitCode: session.exitCode ?? -1,
      };
    },
  };
}
