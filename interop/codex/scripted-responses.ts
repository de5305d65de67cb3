// A scripted model behind the OpenAI Responses API, on 127.0.0.1, for a real Codex CLI to talk to
// (`[model_providers.X] base_url = "<baseUrl>"`, `wire_api = "responses"`). Codex 0.169.0 sends
// `POST <base_url>/responses` with the whole conversation in `input` (it keeps no state on the server:
// `store: false`) and reads a server-sent event stream back. This server answers each such request with
// what its `respond` function returns (tool calls or a closing message) and records every request, so a
// test can read exactly what the model was sent: the tools it was offered and each tool call's
// `function_call_output`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One item of a Responses request's `input` (messages, the model's own calls, tool outputs, …). */
export interface InputItem {
  type: string;
  [key: string]: unknown;
}

/** The body of `POST /v1/responses` as Codex sends it (only the fields these tests read are typed). */
export interface ResponsesRequest {
  model: string;
  stream: boolean;
  input: InputItem[];
  tools: { type: string; name?: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

/**
 * A call the scripted model makes. `namespace` is how Codex groups an MCP server's tools: the tools of
 * `[mcp_servers.ux]` are offered as one `{ type: "namespace", name: "mcp__ux", tools: [...] }` tool, and
 * a call to one of them names the namespace and the tool's own name.
 */
export interface ToolCall {
  callId: string;
  namespace?: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** What the model says next: tool calls to make (Codex runs them and asks again), or a closing message. */
export type ModelTurn = { calls: ToolCall[] } | { message: string };

export interface ScriptedResponsesServer {
  /** For `base_url`: `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Every `POST /v1/responses` body, in the order they came. */
  requests: ResponsesRequest[];
  /** Whatever this server did not expect (another path, a compressed body, a script error), in words. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * Starts the server on 127.0.0.1 (a free port). `respond` sees each request and says what the model does;
 * when it throws, the model ends the turn with a message (so Codex exits) and the error lands in
 * `problems`.
 */
export async function startScriptedResponses(
  respond: (request: ResponsesRequest) => ModelTurn,
): Promise<ScriptedResponsesServer> {
  const requests: ResponsesRequest[] = [];
  const problems: string[] = [];
  let responses = 0;

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method !== 'POST' || req.url !== '/v1/responses') {
      problems.push(`unexpected request: ${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no ${req.url} here`, type: 'not_found' } }));
      return;
    }
    if (req.headers['content-encoding']) {
      problems.push(`compressed request body (${req.headers['content-encoding']}); not readable here`);
      res.writeHead(400).end();
      return;
    }
    const request = JSON.parse(body) as ResponsesRequest;
    requests.push(request);
    let turn: ModelTurn;
    try {
      turn = respond(request);
    } catch (error) {
      problems.push(`the script failed at request ${requests.length}: ${(error as Error).stack ?? error}`);
      turn = { message: 'The script failed; see the test output.' };
    }
    responses += 1;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(eventStream(`resp_${responses}`, turn));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The stream Codex reads for one model turn: `response.created`, one `response.output_item.done` per
 * output item (a `function_call` or an assistant `message`), then `response.completed` with a usage
 * record. Codex needs no deltas: the finished items are enough.
 */
export function eventStream(responseId: string, turn: ModelTurn): string {
  const items =
    'calls' in turn
      ? turn.calls.map((call) => ({
          type: 'function_call',
          id: `fc_${call.callId}`,
          call_id: call.callId,
          ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
          name: call.name,
          arguments: JSON.stringify(call.arguments),
        }))
      : [
          {
            type: 'message',
            role: 'assistant',
            id: `msg_${responseId}`,
            content: [{ type: 'output_text', text: turn.message }],
          },
        ];
  const events = [
    { type: 'response.created', response: { id: responseId } },
    ...items.map((item, output_index) => ({ type: 'response.output_item.done', output_index, item })),
    {
      type: 'response.completed',
      response: {
        id: responseId,
        usage: {
          input_tokens: 1,
          input_tokens_details: null,
          output_tokens: 1,
          output_tokens_details: null,
          total_tokens: 2,
        },
      },
    },
  ];
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/** A tool's `function_call_output` in a request, by call id (Codex sends the whole history each time). */
export function toolOutputIn(request: ResponsesRequest, callId: string): InputItem | undefined {
  return request.input.find((item) => item.type === 'function_call_output' && item.call_id === callId);
}

/** What the model read for one tool call, taken apart. */
export interface ModelReceived {
  /** The `output` of the `function_call_output` exactly as Codex sent it. */
  raw: unknown;
  /** Codex's own `Wall time: N seconds` line, which it puts before every MCP result. */
  codexWallTimeSeconds?: number;
  /** The JSON after Codex's `Output:` line: the MCP result's `structuredContent`, when it had one. */
  structured?: Record<string, unknown>;
  /** The text the model read when there was no JSON (the MCP result's text content items, joined). */
  text?: string;
}

/**
 * Takes apart a `function_call_output.output` from Codex 0.169.0. For an MCP result with
 * `structuredContent` it is one string, `Wall time: N seconds\nOutput:\n<structuredContent as JSON>`;
 * for one without (an error result, say) it is a list of `input_text` items: the same header, then the
 * result's text content.
 */
export function readModelReceived(raw: unknown): ModelReceived {
  const header = /^Wall time: ([0-9.]+) seconds\nOutput:\n?/;
  if (typeof raw === 'string') {
    const found = header.exec(raw);
    const rest = found ? raw.slice(found[0].length) : raw;
    const received: ModelReceived = {
      raw,
      ...(found ? { codexWallTimeSeconds: Number(found[1]) } : {}),
    };
    try {
      const parsed: unknown = JSON.parse(rest);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        return { ...received, structured: parsed as Record<string, unknown> };
    } catch {
      // Not JSON: text.
    }
    return { ...received, text: rest };
  }
  if (Array.isArray(raw)) {
    const texts = raw
      .filter((item): item is { type: string; text: string } => typeof item?.text === 'string')
      .map((item) => item.text);
    const found = texts[0] === undefined ? null : header.exec(texts[0]);
    const first = found ? texts[0]!.slice(found[0].length) : texts[0];
    const rest = [...(first ? [first] : []), ...texts.slice(1)];
    return {
      raw,
      ...(found ? { codexWallTimeSeconds: Number(found[1]) } : {}),
      text: rest.join('\n'),
    };
  }
  return { raw };
}
