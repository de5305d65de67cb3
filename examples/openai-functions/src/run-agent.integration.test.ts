import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createDoor } from '@ux/door';
import { startScriptedChatModel, tempDir, useLeakCheck } from '@ux/test-utils';
import { expect, it, onTestFinished } from 'vitest';
import { runAgent } from './run-agent.js';

useLeakCheck();

it('hands the two tools to a chat-completions model and its calls to the sandboxed door', async () => {
  const model = await startScriptedChatModel([
    () => ({
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo from the model' }) },
        },
      ],
    }),
    (request) => ({ content: `It printed: ${request.messages.at(-1)?.content?.includes('from the model')}` }),
  ]);
  onTestFinished(() => model.close());
  const root = tempDir('ux-openai-functions-');
  mkdirSync(join(root, 'home'));
  const door = await createDoor({
    cwd: root,
    baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(root, 'home') },
  });
  onTestFinished(() => door.shutdown());

  const answer = await runAgent({
    door,
    baseURL: model.url,
    apiKey: 'test',
    model: 'scripted',
    prompt: 'say hi',
  });

  expect(answer).toBe('It printed: true');
  expect(model.requests[0]?.tools?.map((tool) => tool.function.name)).toEqual([
    'exec_command',
    'write_stdin',
  ]);
  const toolMessage = model.requests[1]?.messages.at(-1);
  expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
  expect(toolMessage?.content).toContain('Process exited with code 0');
});
