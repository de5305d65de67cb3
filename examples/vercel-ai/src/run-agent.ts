import { createOpenAI } from '@ai-sdk/openai';
import type { Door } from '@ux/door';
import { generateText, stepCountIs } from 'ai';
import { uxTools } from './ux-tools.js';

export interface AgentOptions {
  door: Door;
  /** An OpenAI-compatible API (`https://api.openai.com/v1`, or a local server). */
  baseURL: string;
  apiKey: string;
  model: string;
  prompt: string;
}

/** One generation with the door's tools: the SDK runs the model's calls and hands back their results. */
export async function runAgent(options: AgentOptions): Promise<string> {
  const provider = createOpenAI({ baseURL: options.baseURL, apiKey: options.apiKey });
  const { text } = await generateText({
    model: provider.chat(options.model),
    tools: uxTools(options.door),
    stopWhen: stepCountIs(5),
    prompt: options.prompt,
  });
  return text;
}
