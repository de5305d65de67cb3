// `ux mcp` under load, floods and bad input: nothing lost, nothing leaked, every request
// answered once. Through the MCP SDK's client where it can produce the input, on the wire otherwise.
import { readFileSync } from 'node:fs';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { expectNoneMatching, makeHome, uniqueMarker } from './cli-harness.js';
import { connectMcp, McpWire, resultText } from './mcp-wire.js';

useLeakCheck();

const rssMib = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

describe('ux mcp keeps what it must and nothing more', () => {
  it('a terminal flood polled to the end leaves the heap where it was (three rounds of 100 MB, heap capped)', async () => {
    // 25 % of a chatty terminal's output used to stay on the heap: with 80 MB of heap the server died.
    const { call, pid } = await connectMcp(makeHome(), ['--max-old-space-size=80']);
    const rss: number[] = [];
    for (let round = 0; round < 3; round++) {
      const first = await call('exec_command', {
        cmd: 'yes | head -c 100000000',
        tty: true,
        login: false,
        yield_time_ms: 1000,
      });
      let session = first.session;
      while (session)
        session = (await call('write_stdin', { session_id: Number(session), yield_time_ms: 10_000 })).session;
      rss.push(rssMib(pid));
    }
    expect((await call('exec_command', { cmd: 'echo alive', login: false })).text).toContain('alive');
    expect(
      rss[2]! - rss[0]!,
      `resident memory after each round: ${rss.map((m) => m.toFixed(0)).join(', ')} MiB`,
    ).toBeLessThan(32);
  }, 240_000);

  it('structured output is bounded, marks the gap, and counts everything', async () => {
    const { call } = await connectMcp();
    const { text, structured } = await call('exec_command', {
      cmd: 'head -c 3000000 /dev/zero | base64',
      login: false,
      yield_time_ms: 10_000,
    });
    // base64 of 3,000,000 bytes: 4,000,000 characters in lines of 76, each with its newline.
    expect(structured).toMatchObject({
      exit_code: 0,
      original_token_count: 1_013_158,
      output_bytes: 4_052_632,
      output_lines: 52_632,
    });
    const output = String(structured?.output);
    expect(output.length).toBeLessThan(50_000);
    expect(output).toMatch(/^Total output lines: 52632\n\nAAAA[\s\S]*…\d+ tokens truncated…[\s\S]*AAAA\n$/);
    expect(text).toContain('Original token count: 1013158');
    expect(text).toContain('Total output lines: 52632');
  });

  it('70 concurrent calls all answer for the command they started: pruning never takes a process from a waiting call', async () => {
    const { call } = await connectMcp();
    const marker = uniqueMarker();
    const replies = await Promise.all(
      Array.from({ length: 70 }, (_, i) =>
        call('exec_command', { cmd: `sleep 4; echo ${marker}-${i}`, login: false, yield_time_ms: 20_000 }),
      ),
    );
    expect(
      replies.filter((reply) => /Unknown process id/.test(reply.text)).map((reply) => reply.text),
    ).toEqual([]);
    for (const [i, reply] of replies.entries()) expect(reply.text).toContain(`${marker}-${i}`);
  }, 120_000);

  it('a 5 MB command is refused with its size and the limit, and not echoed back', async () => {
    const { call } = await connectMcp();
    const { result, text } = await call('exec_command', {
      cmd: `echo ${'x'.repeat(5_000_000)}`,
      login: false,
    });
    expect(result.isError).toBe(true);
    expect(text).toMatch(
      /^Failed `echo x+… \(5000005 bytes\)`: the command is 5000005 bytes; the limit here is 131071 bytes /,
    );
    expect(text.length).toBeLessThan(1_000);
    // Neither rendering echoes it back.
    expect(JSON.stringify(result.structuredContent).length).toBeLessThan(2_000);
    expect(result.structuredContent).toMatchObject({
      status: 'failed',
      command: `echo ${'x'.repeat(195)}… (5000005 bytes)`,
    });
  });

  it('a NUL in workdir is named as workdir', async () => {
    const { call } = await connectMcp();
    const { result, text } = await call('exec_command', { cmd: 'pwd', workdir: 'a\u0000b' });
    expect(result.isError).toBe(true);
    expect(text).toContain('workdir: must not contain a NUL byte');
  });
});

describe('ux mcp on the wire', () => {
  it('answers a line over 10 MiB with an error that names the limit and keeps serving, its sessions alive', async () => {
    const home = makeHome();
    const wire = McpWire.start(home);
    wire.send(McpWire.initialize(1));
    await wire.answer(1);
    wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    wire.send(
      McpWire.call(2, 'exec_command', { cmd: 'echo READY; sleep 30', login: false, yield_time_ms: 500 }),
    );
    const session = /session ID (\d+)/.exec(resultText(await wire.answer(2)))?.[1];
    expect(session).toBeDefined();
    // The SDK's client puts the id last; the server finds it there.
    wire.send(
      `{"method":"tools/call","params":{"name":"exec_command","arguments":{"cmd":"echo ${'y'.repeat(11 * 1024 * 1024)}"}},"jsonrpc":"2.0","id":3}`,
    );
    const refused = await wire.answer(3);
    expect(refused.error).toEqual({
      code: -32600,
      message: expect.stringMatching(
        /^Invalid Request: the message is \d+ bytes, over this server's limit of 10485760 bytes a line; it was skipped$/,
      ),
    });
    wire.send(McpWire.call(4, 'write_stdin', { session_id: Number(session), yield_time_ms: 250 }));
    expect(resultText(await wire.answer(4))).toContain(`Process running with session ID ${session}`);
    wire.end();
    expect((await wire.exited).code).toBe(0);
  });

  it('end of input right after five calls: each is answered, what they started is ended, the server exits', async () => {
    const home = makeHome();
    const wire = McpWire.start(home);
    const marker = uniqueMarker();
    const calls = Array.from({ length: 5 }, (_, i) =>
      JSON.stringify(
        McpWire.call(10 + i, 'exec_command', {
          cmd: `echo ${marker}; sleep 60`,
          login: false,
          yield_time_ms: 30_000,
        }),
      ),
    );
    const startedAt = Date.now();
    wire.write(
      `${[JSON.stringify(McpWire.initialize(1)), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), ...calls].join('\n')}\n`,
    );
    wire.end();
    expect((await wire.exited).code).toBe(0);
    // Exited by ending the calls' processes, not by waiting out their 60 s sleeps or 30 s yields (the
    // only bound no loaded machine breaks).
    expect(Date.now() - startedAt).toBeLessThan(30_000);
    for (let i = 0; i < 5; i++) {
      const answers = wire.answersTo(10 + i);
      expect(answers, `answers to request ${10 + i}`).toHaveLength(1);
      expect(resultText(answers[0]!)).toMatch(
        /^(not run: the server is shutting down|stopped after [\d.]+s: the session shut down)/,
      );
    }
    await expectNoneMatching(marker);
  }, 60_000);

  it('answers requests that come before initialized, and refuses those before initialize', async () => {
    const wire = McpWire.start(makeHome());
    wire.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect((await wire.answer(1)).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('not initialized: send initialize first'),
    });
    wire.send(McpWire.initialize(2));
    await wire.answer(2);
    // No notifications/initialized yet: the call is answered all the same.
    wire.send(McpWire.call(3, 'exec_command', { cmd: 'echo early', login: false }));
    expect(resultText(await wire.answer(3))).toContain('early');
    wire.end();
    expect((await wire.exited).code).toBe(0);
  });
});
