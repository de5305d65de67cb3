import { shlexJoin } from '@ux/orchestrator';

/** How much of a command a failure message repeats. */
export const COMMAND_PREVIEW_CHARS = 200;

/**
 * The command as a failure message shows it: quoted as typed, and cut after 200 characters with its
 * full size, so a 5 MB command is not echoed back to the model.
 */
export function commandPreview(argv: readonly string[]): string {
  const joined = shlexJoin(argv);
  if (joined.length <= COMMAND_PREVIEW_CHARS) return joined;
  return `${joined.slice(0, COMMAND_PREVIEW_CHARS)}… (${Buffer.byteLength(joined, 'utf8')} bytes)`;
}
