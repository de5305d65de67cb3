// The result contract's constants, apart from its zod schema: importing them must not load zod
// (the CLI's command bundles stay free of a schema library; apps/cli/test/bundles.test.ts).

/** The version of the result contract (exec-result.ts); it changes only when a field changes meaning or goes. */
export const EXEC_RESULT_VERSION = 1;

/** What became of the call. */
export const execResultStatuses = ['exited', 'running', 'refused', 'failed', 'interrupted'] as const;
export type ExecResultStatus = (typeof execResultStatuses)[number];

/** What kind of thing the sandbox (or the network proxy) blocked. */
export const sandboxDenialKinds = [
  'file_write',
  'file_read',
  'network',
  'dns',
  'listen',
  'proxy',
  'process',
] as const;
export type SandboxDenialKind = (typeof sandboxDenialKinds)[number];

/** Who or what decided a refusal. */
export const refusalDeciders = ['person', 'client', 'reviewer', 'rule', 'policy', 'nobody'] as const;
export type RefusalDecider = (typeof refusalDeciders)[number];
