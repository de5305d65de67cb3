// The CLI's reviewers through @ux/protocol's reviewer conformance checks, each driven for real: the
// terminal reviewer on a Terminal over a stream pair with a person at it (who reads the question on
// the screen and presses one of the keys it shows), and the MCP elicitation reviewer on an MCP server
// connected to the official SDK's client over the SDK's in-memory transport, the client answering the
// elicitation requests.
import { PassThrough } from 'node:stream';
import type { ReadStream, WriteStream } from 'node:tty';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { Reviewer } from '@ux/protocol/core';
import { describeConformance, reviewerConformanceChecks } from '@ux/protocol-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createElicitationReviewer, pausingReviewer } from './mcp-reviewer.js';
import { Terminal } from './terminal.js';
import { createNoTerminalReviewer, createTerminalReviewer } from './terminal-reviewer.js';

const OPTIONS = { ruleFile: '/nonexistent/ux/rules/default.rules' };

/**
 * A Terminal whose screen a person watches: at each "Press …" prompt they press the first key of the
 * choices the question shows (`[y] …`), or `pick`'s key.
 */
function terminalWithPerson(pick?: (screen: string) => string) {
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = '';
  let answered = 0;
  const questions: string[] = [];
  output.setEncoding('utf8').on('data', (text: string) => {
    screen += text;
    const prompts = screen.split('Press ').length - 1;
    if (prompts <= answered) return;
    answered = prompts;
    const question = screen.slice(screen.lastIndexOf('ux: '));
    questions.push(question);
    const key = pick ? pick(question) : /\[(\w)\] /.exec(question)?.[1];
    if (key) setImmediate(() => input.write(key));
  });
  const terminal = new Terminal(input as unknown as ReadStream, output as unknown as WriteStream);
  return { terminal, questions, screen: () => screen };
}

describe('the terminal reviewer', () => {
  const person = terminalWithPerson();
  describeConformance(
    'reviewerConformanceChecks: createTerminalReviewer on a Terminal with a person at it',
    reviewerConformanceChecks(() => createTerminalReviewer(person.terminal, OPTIONS)),
  );

  it('was asked on the screen, and only where the signal was not aborted', () => {
    // Runs after the checks above (vitest keeps the order within a file): one question reached the
    // person, the one without an aborted signal.
    expect(person.questions).toHaveLength(1);
    expect(person.questions[0]).toContain('echo conformance');
    expect(person.screen()).toMatch(/\[y\] /);
  });

  const denier = terminalWithPerson(() => 'n');
  describeConformance(
    'reviewerConformanceChecks: createTerminalReviewer when the person denies',
    reviewerConformanceChecks(() => createTerminalReviewer(denier.terminal, OPTIONS)),
  );
});

/** An MCP server and the SDK's client, linked in memory; the client answers elicitations with `answer`. */
function mcpPair(answer: (choices: string[]) => ElicitResult) {
  const server = new Server({ name: 'ux-test-server', version: '1.0.0' }, { capabilities: {} });
  const client = new Client(
    { name: 'ux-test-client', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as unknown as {
      message: string;
      requestedSchema: { properties: { decision: { oneOf: { const: string }[] } } };
    };
    asked.push(params.message);
    return answer(params.requestedSchema.properties.decision.oneOf.map((choice) => choice.const));
  });
  const logged: string[] = [];
  const reviewer = (): Reviewer => createElicitationReviewer(server, (text) => logged.push(text), OPTIONS);
  beforeAll(async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });
  return { reviewer, asked, logged };
}

describe('the reviewer of `ux exec` without a terminal', () => {
  const said: string[] = [];
  describeConformance(
    'reviewerConformanceChecks: createNoTerminalReviewer',
    reviewerConformanceChecks(() => createNoTerminalReviewer((text) => said.push(text))),
  );
  it('said on stderr why the command could not be approved, and only where it was asked', () => {
    expect(said).toEqual([
      'ux: `/bin/sh -c echo conformance` needs approval: no one could be asked for approval (stdin is not a terminal; run ux in a terminal, or choose --approval / --sandbox so that none is needed)\n',
    ]);
  });
});

describe('the MCP elicitation reviewer', () => {
  const accepting = mcpPair((choices) => ({ action: 'accept', content: { decision: choices[0]! } }));
  describeConformance(
    'reviewerConformanceChecks: createElicitationReviewer, the client accepting the first choice',
    reviewerConformanceChecks(accepting.reviewer),
  );
  describeConformance(
    'reviewerConformanceChecks: pausingReviewer(createElicitationReviewer), as `ux mcp` wires it',
    reviewerConformanceChecks(() => pausingReviewer(accepting.reviewer(), () => {})),
  );

  it('asked the client, and only where the signal was not aborted', () => {
    // One question per "answers with a well-formed decision" check above, none for the aborted ones.
    expect(accepting.asked).toHaveLength(2);
    for (const message of accepting.asked) expect(message).toContain('echo conformance');
    expect(accepting.logged).toEqual([]);
  });

  const declining = mcpPair(() => ({ action: 'decline' }));
  describeConformance(
    'reviewerConformanceChecks: createElicitationReviewer, the client declining',
    reviewerConformanceChecks(declining.reviewer),
  );

  const cancelling = mcpPair(() => ({ action: 'cancel' }));
  describeConformance(
    'reviewerConformanceChecks: createElicitationReviewer, the client cancelling',
    reviewerConformanceChecks(cancelling.reviewer),
  );
});
