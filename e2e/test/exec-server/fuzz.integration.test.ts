// A bounded fuzz of the exec-server over stdio: seeded sequences of valid and invalid messages, written
// in random pieces with random pauses, ended at a random point (mid-line included). Each session
// checks what a client relies on:
// - every request gets exactly one answer, with its id; what cannot be answered with an id (a line that
//   is not a message, an unknown notification, a response) gets one error with id -1;
// - the server exits 0 soon after its input ends and no process it started outlives it;
// - its memory stays bounded;
// - a process's output arrives whole and in order: `seq` without holes up to `closed`, and a process
//   that printed a word shows it.
// A failure names the seed: UX_FUZZ_SEED=<seed> runs that session alone.
import { readFileSync } from 'node:fs';
import { descendantPids, isAlive } from '@ux/protocol-testing';
import { seededRandom, tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { b64, type Message, PATH, uri, WireSession, workspaceWriteContext } from './test-support.js';

useLeakCheck(5_000);

const BUDGET_MS = Number(process.env.UX_FUZZ_BUDGET_MS ?? 20_000);
const MAX_SESSIONS = 40;

interface Line {
  text: string;
  /** A request id that must be answered. */
  id?: number;
  /** It must get one error answer with id -1. */
  minusOne?: boolean;
}

function script(seed: number, workspace: string) {
  const rng = seededRandom(seed);
  const lines: Line[] = [];
  /** Processes that print a known word and end: processId → word. */
  const words = new Map<string, string>();
  let id = 1;
  const request = (method: string, params?: unknown) => {
    const current = id++;
    lines.push({
      text: JSON.stringify({ id: current, method, ...(params === undefined ? {} : { params }) }),
      id: current,
    });
  };
  const ids: string[] = [];
  const start = (argv: string[], tty: boolean, sandboxed: boolean) => {
    const processId = `p${ids.length}`;
    ids.push(processId);
    request('process/start', {
      processId,
      argv,
      cwd: uri(workspace),
      env: { PATH },
      tty,
      pipeStdin: tty,
      arg0: null,
      ...(sandboxed ? { sandbox: workspaceWriteContext(workspace) } : {}),
    });
    return processId;
  };
  const initialize = rng.chance(0.95);
  if (initialize) request('initialize', { clientName: 'fuzz' });
  // `initialized` before any `initialize` is answered with an error (id -1) rather than dropped.
  if (rng.chance(0.9))
    lines.push({ text: JSON.stringify({ method: 'initialized', params: {} }), minusOne: !initialize });
  const steps = 4 + rng.int(16);
  for (let step = 0; step < steps; step++) {
    const kind = rng.int(13);
    const known = () => (ids.length > 0 && rng.chance(0.8) ? rng.pick(ids) : `nope${step}`);
    if (kind <= 2) {
      const word = `fuzz-word-${seed}-${step}`;
      words.set(start(['sh', '-c', `echo ${word}`], rng.chance(0.3), rng.chance(0.3)), word);
    } else if (kind === 3) {
      start(['sh', '-c', `echo started-${seed}; exec sleep 30`], rng.chance(0.5), rng.chance(0.3));
    } else if (kind === 4) {
      request('process/read', { processId: known(), afterSeq: rng.int(3), waitMs: rng.pick([0, 100, 2000]) });
    } else if (kind === 5) {
      request('process/write', {
        processId: known(),
        chunk: b64(rng.pick(['x\n', '\u0003', ''])),
        writeId: `w${step}`,
      });
    } else if (kind === 6) {
      request('process/signal', { processId: known(), signal: 'interrupt' });
    } else if (kind === 7) {
      request('process/terminate', { processId: known() });
    } else if (kind === 8) {
      request(rng.pick(['environment/status', 'environment/info', 'no/such/method']));
    } else if (kind === 9) {
      request('fs/getMetadata', { path: uri(workspace) });
    } else if (kind === 10) {
      lines.push({ text: rng.pick(['{not json', '[1]', '42', '{"id":null,"method":"x"}']), minusOne: true });
    } else if (kind === 11) {
      lines.push({ text: JSON.stringify({ method: `bogus/${step}`, params: {} }), minusOne: true });
    } else {
      lines.push({ text: JSON.stringify({ id: 10_000 + step, result: {} }), minusOne: true });
    }
  }
  return { lines, words };
}

const rssMib = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function session(seed: number): Promise<void> {
  const rng = seededRandom(seed ^ 0x51ed270b);
  const workspace = tempDir('ux-es-fuzz-');
  const { lines, words } = script(seed, workspace);
  const expectedIds = new Set(lines.flatMap((line) => (line.id === undefined ? [] : [line.id])));
  let minusOnes = lines.filter((line) => line.minusOne).length;
  let text = `${lines.map((line) => line.text).join('\n')}\n`;
  if (rng.chance(0.3) && lines.length > 0) {
    // End of input inside the last line: it is no message, and obliges nothing.
    const last = lines.at(-1)!;
    text = text.slice(0, text.length - 1 - last.text.length + rng.int(last.text.length + 1));
    if (last.id !== undefined) expectedIds.delete(last.id);
    if (last.minusOne) minusOnes -= 1;
  }
  const wire = WireSession.start();
  const serverPid = wire.child.pid!;
  const seen = new Set<number>();
  for (let at = 0; at < text.length; ) {
    const size = 1 + rng.int(rng.chance(0.5) ? 64 : 4096);
    wire.child.stdin.write(text.slice(at, at + size));
    at += size;
    if (rng.chance(0.2)) await new Promise((resolve) => setTimeout(resolve, rng.int(40)));
  }
  await new Promise((resolve) => setTimeout(resolve, rng.int(1500)));
  for (const pid of descendantPids(serverPid)) seen.add(pid);
  const rss = rssMib(serverPid);
  wire.child.stdin.end();
  const exit = await Promise.race([
    wire.exited,
    new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000)),
  ]);
  const context = `seed ${seed} (UX_FUZZ_SEED=${seed}); lines:\n${lines.map((line) => line.text.slice(0, 200)).join('\n')}\nanswers:\n${wire.messages
    .filter((m: Message) => !('method' in m))
    .map((m) => JSON.stringify(m).slice(0, 200))
    .join('\n')}\nstderr: ${wire.stderr.join('').slice(0, 2000)}`;
  expect(exit, context).toEqual({ code: 0, signal: null });
  expect(rss, context).toBeLessThan(400);
  const answers = wire.messages.filter((m) => !('method' in m));
  for (const id of expectedIds)
    expect(answers.filter((m) => m.id === id).length, `${context}\nanswers to ${id}`).toBe(1);
  expect(answers.filter((m) => m.id === -1).length, `${context}\nanswers with id -1`).toBe(minusOnes);
  for (const answer of answers)
    if (answer.id !== -1)
      expect(expectedIds.has(answer.id as number), `${context}\nunexpected ${answer.id}`).toBe(true);
  // Whole and in order: per process, the notifications' seq run 1, 2, 3 … without a hole.
  const byProcess = new Map<string, number[]>();
  for (const m of wire.messages)
    if (m.method && typeof m.params?.processId === 'string' && typeof m.params?.seq === 'number')
      byProcess.set(m.params.processId, [...(byProcess.get(m.params.processId) ?? []), m.params.seq]);
  for (const [processId, seqs] of byProcess)
    expect(
      [...seqs].sort((a, b) => a - b),
      `${context}\nseq of ${processId}`,
    ).toEqual(seqs.map((_, i) => i + 1));
  for (const [processId, word] of words) {
    const closed = wire.messages.some(
      (m) => m.method === 'process/closed' && m.params?.processId === processId,
    );
    const exited = wire.messages.find(
      (m) => m.method === 'process/exited' && m.params?.processId === processId,
    );
    if (closed && exited?.params?.exitCode === 0)
      expect(wire.output(processId), `${context}\noutput of ${processId}`).toContain(word);
  }
  for (const pid of seen) expect(isAlive(pid), `${context}\nprocess ${pid} outlived the server`).toBe(false);
}

describe('exec-server fuzz', () => {
  it(
    'answers every request once, ends cleanly and loses nothing, whatever comes in',
    async () => {
      const only = process.env.UX_FUZZ_SEED;
      if (only) {
        await session(Number(only));
        return;
      }
      const base = Number(process.env.UX_FUZZ_BASE ?? Date.now() % 1_000_000);
      const deadline = Date.now() + BUDGET_MS;
      for (let i = 0; i < MAX_SESSIONS && (i < 3 || Date.now() < deadline); i++) await session(base + i);
    },
    BUDGET_MS + 120_000,
  );
});
