// What scripts/generate-tool-json-schemas.mjs turns into src/tools/tool-json-schemas.ts: the zod
// schemas of the tools and the converter. Built by the `generate` script alone; not on any entry.
export { createExecCommandArgsSchema } from './exec-command.js';
export { execResultSchema } from './exec-result.js';
export { shellCommandArgsSchema } from './shell-command.js';
export { toJsonSchema } from './to-json-schema.js';
export { writeStdinArgsSchema } from './write-stdin.js';
