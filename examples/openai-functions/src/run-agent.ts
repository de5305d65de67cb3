import type { Door } from '@ux/door';
import { answerFunctionCalls, type FunctionCall, functionTools } from './openai-functions.js';

export interface AgentOptions {
  door: Door;
  /** An OpenAI-compatible API (`https://api.openai.com/v1`, or a local server). */
  baseURL: string;
  apiKey: string;
  model: string;
  prompt: string;
  /** How many model turns at most; default 8. */
  maxTurns?: number;
}

interface Message {
  role: string;
  content: string | null;
  tool_calls?: FunctionCall[];
  tool_call_id?: string;
}

/**
 * The smallest agent loop over chat completions: offer the door's tools, run the calls the model
 * makes, hand their results back, until the model answers without calling anything.
 */
export async function runAgent(options: AgentOptions): Promise<string> {
  const messages: Message[] = [{ role: 'user', content: options.prompt }];
  const tools = functionTools(options.door);
  for (let turn = 0; turn < (options.maxTurns ?? 8); turn++) {
    const response = await fetch(`${options.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ model: options.model, messages, tools }),
    });
    if (!response.ok)
      throw new Error(`chat completions answered ${response.status}: ${await response.text()}`);
    const { choices } = (await response.json()) as { choices: { message: Message }[] };
    const message = choices[0]?.message;
    if (!message) throw new Error('chat completions answered without a message');
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    messages.push(...(await answerFunctionCalls(options.door, message.tool_calls)));
  }
  throw new Error(`the model was still calling tools after ${options.maxTurns ?? 8} turns`);
}
