import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** Longest request line read; a longer one is skipped and answered with an error naming the limit. */
export const MCP_MAX_LINE_BYTES = 10 * 1024 * 1024;
/** How much of an over-long line is kept to find its request id in. */
const ID_SEARCH_BYTES = 64 * 1024;

export interface McpStdioTransportOptions {
  input: Readable;
  output: Writable;
  maxLineBytes?: number;
  /**
   * The input ended. The transport stays open for output: the server answers what it accepted, then
   * closes it.
   */
  onInputEnd: () => void;
}

/**
 * MCP over stdio, one JSON-RPC message per line, for a server that must not go down on bad input
 * (the SDK's own transport closes the connection on a line over 10 MiB and ends at end of input,
 * leaving accepted requests unanswered):
 * - a line over the limit is skipped as it streams in (never buffered whole) and answered with a
 *   JSON-RPC error that names the limit, with the request's id when it can be found;
 * - text that is not JSON is answered with -32700, JSON that is not a JSON-RPC message with -32600
 *   and its id when it has one;
 * - end of input is reported (`onInputEnd`) instead of closing, and `pending` holds the requests not
 *   answered yet (and not cancelled by the client), so the server can answer every one before it
 *   closes.
 */
export class McpStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** Requests read and not answered yet, by id. */
  readonly pending = new Set<RequestId>();
  private readonly maxLineBytes: number;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private skipping: { bytes: number; prefix: Buffer; suffix: Buffer } | undefined;
  private closed = false;
  private readonly onData = (chunk: Buffer) => this.read(chunk);
  private readonly onEnd = () => this.options.onInputEnd();
  private readonly onError = (error: Error) => this.onerror?.(error);

  constructor(private readonly options: McpStdioTransportOptions) {
    this.maxLineBytes = options.maxLineBytes ?? MCP_MAX_LINE_BYTES;
  }

  async start(): Promise<void> {
    this.options.input.on('data', this.onData);
    this.options.input.once('end', this.onEnd);
    this.options.input.on('error', this.onError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message))
      this.pending.delete(message.id);
    const line = `${JSON.stringify(message)}\n`;
    if (this.options.output.write(line)) return;
    await new Promise<void>((resolve) => this.options.output.once('drain', resolve));
  }

  /** Answers a request with an error (the server's own, for requests it will never get to). */
  async reply(id: RequestId | null, code: number, message: string): Promise<void> {
    await this.send({ jsonrpc: '2.0', id: id as RequestId, error: { code, message } });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.options.input.off('data', this.onData);
    this.options.input.off('end', this.onEnd);
    this.options.input.off('error', this.onError);
    this.options.input.pause();
    this.parts = [];
    this.onclose?.();
  }

  private read(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const piece = newline === -1 ? chunk.subarray(start) : chunk.subarray(start, newline);
      if (this.skipping) {
        this.skipping.bytes += piece.length;
        this.skipping.suffix = lastBytes([this.skipping.suffix, piece]);
      } else if (this.partBytes + piece.length > this.maxLineBytes) {
        const all = [...this.parts, piece];
        this.skipping = {
          bytes: this.partBytes + piece.length,
          prefix: Buffer.from(Buffer.concat(all).subarray(0, ID_SEARCH_BYTES)),
          suffix: lastBytes(all),
        };
        this.parts = [];
        this.partBytes = 0;
      } else if (piece.length > 0) {
        // A copy: a view would keep the whole chunk it came in alive while the line is assembled.
        this.parts.push(Buffer.from(piece));
        this.partBytes += piece.length;
      }
      if (newline === -1) return;
      start = newline + 1;
      if (this.skipping) {
        const { bytes, prefix, suffix } = this.skipping;
        this.skipping = undefined;
        void this.reply(
          idIn(prefix.toString('utf8'), suffix.toString('utf8')),
          -32600,
          `Invalid Request: the message is ${bytes} bytes, over this server's limit of ${this.maxLineBytes} bytes a line; it was skipped`,
        );
        continue;
      }
      const line = Buffer.concat(this.parts, this.partBytes);
      this.parts = [];
      this.partBytes = 0;
      this.handle(line.toString('utf8').replace(/\r$/, ''));
    }
  }

  private handle(text: string): void {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      void this.reply(null, -32700, `Parse error: ${(error as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      void this.reply(
        requestId(value) ?? null,
        -32600,
        'Invalid Request: a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0" and either a "method" (a request, with an "id", or a notification) or an "id" with a "result" or an "error" (a response)',
      );
      return;
    }
    const message = parsed.data;
    if ('method' in message && 'id' in message) this.pending.add(message.id);
    // A request the client cancels is not answered (MCP: the receiver should not respond to it).
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const cancelled = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (cancelled !== undefined) this.pending.delete(cancelled);
    }
    this.onmessage?.(message);
  }
}

/** The `id` of a parsed message, when it is one a response can carry. */
function requestId(value: unknown): RequestId | undefined {
  if (typeof value !== 'object' || value === null || !('id' in value)) return undefined;
  const id = (value as { id: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}

const ID_VALUE = String.raw`(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")`;

/**
 * The id of a message too long to parse, from its ends: clients put it last (`…,"id":7}`, the MCP
 * SDK) or among the first keys, before `"params"`.
 */
function idIn(prefix: string, suffix: string): RequestId | null {
  const last = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}\s*$`).exec(suffix.replace(/\r$/, ''));
  const params = prefix.indexOf('"params"');
  const first = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}`).exec(
    params === -1 ? prefix : prefix.slice(0, params),
  );
  const found = (last ?? first)?.[1];
  if (found === undefined) return null;
  try {
    const id = JSON.parse(found) as RequestId;
    return typeof id === 'number' && !Number.isFinite(id) ? null : id;
  } catch {
    return null;
  }
}

/** The last `ID_SEARCH_BYTES` bytes of some pieces. */
function lastBytes(pieces: Buffer[]): Buffer {
  const joined = Buffer.concat(pieces.slice(-2));
  return Buffer.from(joined.subarray(Math.max(0, joined.length - ID_SEARCH_BYTES)));
}
