/** What a command may touch: output streams, environment, platform. Tests pass their own. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}
