import { shlexJoin } from '@ux/orchestrator';
import { readableText } from '@ux/protocol/core';

/** How much of a command a failure message repeats. */
export const COMMAND_PREVIEW_CHARS = 200;

/**
 * The command as a failure message shows it: quoted as typed, and cut after 200 characters with its
 * full size, so a 5 MB command is not echoed back to the model. Control, bidi and zero-width
 * characters are shown as escapes (`readableText`): the message reaches terminals too.
 */
export function commandPreview(argv: readonly string[]): string {
  const joined = shlexJoin(argv);
  if (joined.length <= COMMAND_PREVIEW_CHARS) return readableText(joined);
  return `${readableText(joined.slice(0, COMMAND_PREVIEW_CHARS))}… (${Buffer.byteLength(joined, 'utf8')} bytes)`;
}
