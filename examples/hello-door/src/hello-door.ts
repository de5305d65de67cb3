import { createDoor } from '@ux/door';

// The platform's sandbox, the default features and policy; no reviewer, so nothing ever asks.
const door = await createDoor({
  cwd: process.cwd(),
  onEvent: (event) => event.type === 'exec_command_begin' && console.log(`sandbox: ${event.sandbox}`),
});
console.log(door.tools.map((tool) => tool.name)); // hand these to your model
const reply = await door.execCommand({ cmd: 'echo hello from the sandbox > hello.txt && cat hello.txt' });
console.log(reply.text); // hand this back to your model
await door.shutdown();
