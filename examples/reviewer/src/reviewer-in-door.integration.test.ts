import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createDoor } from '@ux/door';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { expect, it, onTestFinished } from 'vitest';
import { createAskSomeoneReviewer } from './ask-someone-reviewer.js';

useLeakCheck();

async function doorAsking(ask: Parameters<typeof createAskSomeoneReviewer>[0]['ask']) {
  const root = tempDir('ux-reviewer-example-');
  const home = join(root, 'home');
  mkdirSync(home);
  const door = await createDoor({
    cwd: root,
    review: createAskSomeoneReviewer({ ask }),
    baseEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
  });
  onTestFinished(() => door.shutdown());
  return door;
}

const ESCALATED = { sandbox_permissions: 'require_escalated', justification: 'to see the reviewer asked' };

it('asks the person about a command that wants to leave the sandbox, and runs it once they agree', async () => {
  const questions: string[] = [];
  const door = await doorAsking(async (question) => {
    questions.push(question);
    return 'yes';
  });
  const reply = await door.execCommand({ cmd: 'echo approved', ...ESCALATED });
  expect(reply.result).toMatchObject({ status: 'exited', exit_code: 0 });
  expect(reply.text).toContain('approved');
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain('echo approved');
});

it('stops waiting for a person who does not answer when the call is interrupted', async () => {
  const door = await doorAsking(() => new Promise(() => {}));
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const started = Date.now();
  const reply = await door.execCommand({ cmd: 'echo never', ...ESCALATED }, { signal: controller.signal });
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(reply.success).toBe(false);
  expect(reply.text).not.toContain('never\n');
});
