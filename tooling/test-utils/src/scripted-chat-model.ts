import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One message of the chat-completions shape, as much of it as the scripted model reads and writes. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** What a client sent: the messages so far and the tools it offered. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }[];
}

/** A model on 127.0.0.1 that answers `POST …/chat/completions` from a script, one turn per request. */
export interface ScriptedChatModel {
  /** The base URL to give a client (`http://127.0.0.1:PORT/v1`). */
  url: string;
  /** Every request received, in order. */
  requests: ChatRequest[];
  close(): Promise<void>;
}

/**
 * Starts a scripted OpenAI-compatible chat-completions server: the n-th request is answered with
 * `turns[n](request)` (the assistant's message), non-streaming. A request past the script, or one
 * asking to stream, is answered 400 with the reason, so a test fails saying what was unexpected.
 */
export async function startScriptedChatModel(
  turns: readonly ((request: ChatRequest) => Omit<ChatMessage, 'role'>)[],
): Promise<ScriptedChatModel> {
  const requests: ChatRequest[] = [];
  const server = createServer(async (incoming, response) => {
    const fail = (message: string) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
    };
    if (incoming.method !== 'POST' || !incoming.url?.endsWith('/chat/completions'))
      return fail(
        `the scripted model answers POST …/chat/completions only, not ${incoming.method} ${incoming.url}`,
      );
    const request = JSON.parse(await bodyOf(incoming)) as ChatRequest & { stream?: boolean };
    if (request.stream) return fail('the scripted model does not stream');
    const turn = turns[requests.length];
    requests.push(request);
    if (!turn) return fail(`the script has ${turns.length} turns; this is request ${requests.length}`);
    const message = { role: 'assistant' as const, ...turn(request) };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [{ index: 0, message, finish_reason: message.tool_calls?.length ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function bodyOf(incoming: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
