// A bounded fuzz of `ux mcp` on the wire: seeded sequences of valid and invalid messages, written in
// random pieces with random pauses, ended at a random point (end of input mid-line included). Each
// session checks the invariants an operator running one server per agent for days relies on:
// - every request gets exactly one answer (a cancelled one at most one), notifications none;
// - every line that is not a message gets one error answer (id null when it has none);
// - the server exits 0 soon after its input ends, and no process it started outlives it;
// - its memory stays bounded;
// - nothing a command printed is lost without a mark: a short command's output is all there, a long
//   one's counts are exact and its cut is marked.
// A failure names the seed: UX_FUZZ_SEED=<seed> runs that session alone (UX_FUZZ_DUMP=<file> writes
// what it sends there).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { descendantPids } from '@ux/protocol-testing';
import { seededRandom, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { expectNoneMatching, makeHome, uniqueMarker } from './cli-harness.js';
import { McpWire, resultText, type WireMessage } from './mcp-wire.js';

useLeakCheck();

/** How long the fuzz may run in all (CI runs it with the suite), and at most how many sessions. */
const BUDGET_MS = Number(process.env.UX_FUZZ_BUDGET_MS ?? 25_000);
const MAX_SESSIONS = 40;

interface Expectations {
  /** Request ids that must get exactly one answer. */
  requests: Set<number>;
  /** Request ids that may get none (cancelled). */
  cancelled: Set<number>;
  /** Lines that must each get one error answer with id null. */
  nullAnswers: number;
  /** exec_command calls whose complete output is known: id → what it prints. */
  echoes: Map<number, string>;
  /** exec_command calls that print a known number of bytes: id → bytes. */
  floods: Map<number, number>;
}

/** One line of a session, with what it obliges the server to answer. */
interface Line {
  text: string;
  /** A request id that must be answered. */
  id?: number;
  /** It must get one error answer with id null. */
  nullAnswer?: boolean;
}

/** One session's lines, built from the seed. The marker is in every command, to find its processes. */
function script(seed: number, marker: string): { lines: Line[]; expect: Expectations } {
  const rng = seededRandom(seed);
  const expect: Expectations = {
    requests: new Set(),
    cancelled: new Set(),
    nullAnswers: 0,
    echoes: new Map(),
    floods: new Map(),
  };
  const lines: Line[] = [];
  let id = 1;
  const request = (method: string, params?: unknown) => {
    const current = id++;
    expect.requests.add(current);
    lines.push({
      text: JSON.stringify({
        jsonrpc: '2.0',
        id: current,
        method,
        ...(params === undefined ? {} : { params }),
      }),
      id: current,
    });
    return current;
  };
  const notification = (method: string, params?: unknown) =>
    lines.push({
      text: JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }),
    });
  const call = (args: Record<string, unknown>, name = 'exec_command') =>
    request('tools/call', { name, arguments: args });
  if (rng.chance(0.95)) request('initialize', McpWire.initialize(0).params);
  if (rng.chance(0.9)) notification('notifications/initialized');
  const steps = 4 + rng.int(16);
  for (let step = 0; step < steps; step++) {
    const kind = rng.int(14);
    if (kind <= 2) {
      const word = `${marker}-echo-${step}`;
      expect.echoes.set(
        call({ cmd: `echo ${word}`, login: false, yield_time_ms: 250 + rng.int(2000) }),
        word,
      );
    } else if (kind === 3) {
      call({
        cmd: `echo ${marker}-long; sleep 30`,
        login: false,
        yield_time_ms: 250 + rng.int(300),
        tty: rng.chance(0.5),
      });
    } else if (kind === 4) {
      const bytes = rng.pick([0, 1, 1000, 100_000, 3_000_000]);
      const printed = bytes === 0 ? 0 : Math.ceil(bytes / 3) * 4 + Math.ceil((Math.ceil(bytes / 3) * 4) / 76);
      expect.floods.set(
        call({
          cmd: `head -c ${bytes} /dev/zero | base64; : ${marker}`,
          login: false,
          yield_time_ms: 10_000,
        }),
        printed,
      );
    } else if (kind === 5) {
      call(
        { session_id: 1000 + rng.int(99_000), chars: rng.pick(['', 'x\n', '\u0003']), yield_time_ms: 250 },
        'write_stdin',
      );
    } else if (kind === 6) {
      request('tools/list');
    } else if (kind === 7) {
      request('ping');
    } else if (kind === 8) {
      request(`no/such/${step}`);
    } else if (kind === 9) {
      lines.push({
        text: rng.pick(['{not json', '[1,2', '"just a string"', 'null', '{}', '[]', '{"jsonrpc":"2.0"}']),
        nullAnswer: true,
      });
      expect.nullAnswers += 1;
    } else if (kind === 10) {
      // Invalid, but with an id: the answer carries it.
      const current = id++;
      expect.requests.add(current);
      lines.push({ text: JSON.stringify({ jsonrpc: '2.0', id: current }), id: current });
    } else if (kind === 11) {
      notification('notifications/whatever', { step });
    } else if (kind === 12 && id > 2) {
      const target = 1 + rng.int(id - 1);
      expect.cancelled.add(target);
      notification('notifications/cancelled', { requestId: target, reason: 'fuzz' });
    } else {
      call({ cmd: rng.pick(['', '   ', 'a\u0000b']), login: false });
    }
  }
  return { lines, expect };
}

async function session(seed: number): Promise<void> {
  const rng = seededRandom(seed ^ 0x9e3779b9);
  const marker = uniqueMarker();
  const { lines, expect: expected } = script(seed, marker);
  const wire = McpWire.start(makeHome());
  let text = `${lines.map((line) => line.text).join('\n')}\n`;
  // End of input at a random point in the last line: a line cut short is no message, so it obliges
  // nothing (the server drops an unfinished line at end of input).
  if (rng.chance(0.3) && lines.length > 0) {
    const last = lines.at(-1)!;
    text = text.slice(0, text.length - 1 - last.text.length + rng.int(last.text.length + 1));
    if (last.id !== undefined) expected.requests.delete(last.id);
    if (last.nullAnswer) expected.nullAnswers -= 1;
  }
  if (process.env.UX_FUZZ_DUMP) writeFileSync(process.env.UX_FUZZ_DUMP, text);
  // Written in random pieces, with random pauses.
  for (let at = 0; at < text.length; ) {
    const size = 1 + rng.int(rng.chance(0.5) ? 64 : 4096);
    wire.write(text.slice(at, at + size));
    at += size;
    if (rng.chance(0.2)) await new Promise((resolve) => setTimeout(resolve, rng.int(40)));
  }
  await new Promise((resolve) => setTimeout(resolve, rng.int(1500)));
  const rss = wire.rssMib();
  wire.end();
  const exit = await Promise.race([
    wire.exited,
    new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000)),
  ]);
  const tree =
    exit === 'hung'
      ? [wire.pid, ...descendantPids(wire.pid)]
          .map(
            (pid) =>
              `${pid} ${execFileSync('ps', ['-o', 'stat=,args=', '-p', String(pid)], { encoding: 'utf8' }).trim()}`,
          )
          .join('\n')
      : '';
  const context = `seed ${seed} (UX_FUZZ_SEED=${seed}); ${exit === 'hung' ? `still running after 20 s:\n${tree}\nanswers: ${wire.messages.map((m) => `${m.id}: ${JSON.stringify(m).slice(0, 300)}`).join('\n')}\n` : ''}lines:\n${lines.map((line) => line.text.slice(0, 160)).join('\n')}\nstderr: ${wire.stderr.join('').slice(0, 2000)}`;
  expect(exit, context).toEqual({ code: 0, signal: null });
  expect(rss, context).toBeLessThan(400);
  for (const id of expected.requests) {
    const answers = wire.answersTo(id);
    if (expected.cancelled.has(id))
      expect(answers.length, `${context}\nanswers to ${id}`).toBeLessThanOrEqual(1);
    else expect(answers.length, `${context}\nanswers to ${id}`).toBe(1);
  }
  expect(wire.answersTo(null).length, `${context}\nanswers with id null`).toBe(expected.nullAnswers);
  const answeredIds = new Set(wire.messages.filter((m) => 'result' in m || 'error' in m).map((m) => m.id));
  for (const answered of answeredIds)
    if (answered !== null)
      expect(expected.requests.has(answered as number), `${context}\nunexpected answer ${answered}`).toBe(
        true,
      );
  for (const [id, word] of expected.echoes) {
    const answer = wire.answersTo(id)[0];
    if (answer && /Process exited with code 0/.test(resultText(answer)))
      expect(resultText(answer), `${context}\nthe output of ${id}`).toContain(word);
  }
  for (const [id, bytes] of expected.floods) {
    const answer = wire.answersTo(id)[0] as WireMessage | undefined;
    const structured = (answer?.result as { structuredContent?: Record<string, unknown> } | undefined)
      ?.structuredContent;
    if (structured?.exit_code !== 0) continue;
    expect(structured.output_bytes, `${context}\nthe byte count of ${id}`).toBe(bytes);
    const shown = Buffer.byteLength(String(structured.output));
    if (bytes > shown)
      expect(String(structured.output), `${context}\nthe cut in ${id}`).toMatch(/…\d+ tokens truncated…/);
  }
  await expectNoneMatching(marker, 5_000);
}

describe('ux mcp fuzz', () => {
  it(
    'answers every request once, ends cleanly and loses nothing, whatever comes in',
    async () => {
      const only = process.env.UX_FUZZ_SEED;
      const seeds = only ? [Number(only)] : [];
      const base = Number(process.env.UX_FUZZ_BASE ?? Date.now() % 1_000_000);
      const deadline = Date.now() + BUDGET_MS;
      let ran = 0;
      if (only) await session(Number(only));
      else
        for (let i = 0; i < MAX_SESSIONS && (ran < 3 || Date.now() < deadline); i++, ran++) {
          seeds.push(base + i);
          await session(base + i);
        }
      expect(ran + (only ? 1 : 0)).toBeGreaterThan(0);
    },
    BUDGET_MS + 120_000,
  );
});
