import type { Door } from '@ux/door';

/** A tool as OpenAI-style function calling offers it (`tools` of a chat-completions request). */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: unknown };
}

/** A function call the model made (`tool_calls` of an assistant message). */
export interface FunctionCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The door's tools (`exec_command`, `write_stdin`) as function tools. */
export function functionTools(door: Door): FunctionTool[] {
  return door.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/**
 * Runs the model's function calls through the door, in order, and returns the `tool` messages that
 * answer them. Arguments that are not JSON are handed on as they are: the door answers a model's
 * mistake with a failed result that says what to fix, never a throw.
 */
export async function answerFunctionCalls(
  door: Door,
  calls: readonly FunctionCall[],
  signal?: AbortSignal,
): Promise<{ role: 'tool'; tool_call_id: string; content: string }[]> {
  const answers = [];
  for (const call of calls) {
    const reply = await door.call(call.function.name, parsed(call.function.arguments), {
      callId: call.id,
      ...(signal ? { signal } : {}),
    });
    answers.push({ role: 'tool' as const, tool_call_id: call.id, content: reply.text });
  }
  return answers;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
