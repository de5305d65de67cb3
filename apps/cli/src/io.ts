import type { Terminal } from './terminal.js';

/** What a command may touch: output streams, environment, platform. Tests pass their own. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** The person's terminal, when stdin and stdout are one; absent in pipelines and tests. */
  terminal?: () => Terminal | undefined;
}
