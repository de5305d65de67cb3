import { ApplyPatchError } from './apply-patch-error.js';
import type { PatchHunk, PatchLine } from './parse-patch.js';
import { seekSequence } from './seek-sequence.js';

interface Replacement {
  at: number;
  remove: number;
  insert: readonly string[];
}

/**
 * Applies the hunks of one Update File operation to a file's text and returns the new text. Hunks
 * are found in order (each search starts after the previous hunk); `@@` anchors are found first and
 * the hunk is searched after them. The file keeps its line ending (CRLF stays CRLF) and its missing
 * final newline. `displayPath` names the file in errors.
 */
export function updateFileContents(
  original: string,
  hunks: readonly PatchHunk[],
  displayPath: string,
): string {
  const eol = detectEol(original);
  const endsWithNewline = original === '' || original.endsWith('\n');
  const lines = splitLines(original, eol);
  const replacements: Replacement[] = [];
  let cursor = 0;

  for (const hunk of hunks) {
    for (const anchor of hunk.anchors) {
      const found = seekSequence(lines, [anchor], cursor);
      if (found === undefined) {
        throw new ApplyPatchError({
          reason: 'context_not_found',
          detail: `Failed to find context '${anchor}' in ${displayPath}`,
          line: hunk.line,
          path: displayPath,
        });
      }
      cursor = found + 1;
    }

    if (hunk.oldLines.length === 0) {
      // Nothing to find: insert right after the anchor, or append at the end of the file.
      const at = hunk.anchors.length > 0 && !hunk.endOfFile ? cursor : lines.length;
      replacements.push({ at, remove: 0, insert: hunk.newLines });
      continue;
    }

    let entries: readonly PatchLine[] = hunk.lines;
    let found = seekSequence(lines, oldSide(entries), cursor, hunk.endOfFile);
    // A trailing empty context line may stand for the file's final newline, which is not a line here.
    while (found === undefined && entries.at(-1)?.sign === ' ' && entries.at(-1)?.text === '') {
      entries = entries.slice(0, -1);
      if (oldSide(entries).length === 0) break;
      found = seekSequence(lines, oldSide(entries), cursor, hunk.endOfFile);
    }
    const oldLength = oldSide(entries).length;
    if (found === undefined || oldLength === 0) {
      throw new ApplyPatchError({
        reason: 'context_not_found',
        detail: `Failed to find expected lines in ${displayPath}:\n${hunk.oldLines.join('\n')}`,
        line: hunk.line,
        path: displayPath,
      });
    }
    replacements.push({ at: found, remove: oldLength, insert: newSide(entries, lines, found) });
    cursor = found + oldLength;
  }

  // Apply from the bottom up so earlier indices stay valid; the sort is stable for equal positions.
  replacements.sort((a, b) => a.at - b.at);
  for (const { at, remove, insert } of replacements.reverse()) lines.splice(at, remove, ...insert);

  if (lines.length === 0) return '';
  return lines.join(eol) + (endsWithNewline ? eol : '');
}

/** CRLF when most line ends are CRLF, otherwise LF. */
export function detectEol(text: string): '\n' | '\r\n' {
  let crlf = 0;
  let lf = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    if (index > 0 && text[index - 1] === '\r') crlf++;
    else lf++;
  }
  return crlf > 0 && crlf >= lf ? '\r\n' : '\n';
}

/** The file's lines without their line ends (a final newline does not start an extra empty line). */
export function splitLines(text: string, eol: '\n' | '\r\n' = detectEol(text)): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return eol === '\r\n' ? lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line)) : lines;
}

function oldSide(entries: readonly PatchLine[]): string[] {
  return entries.filter((entry) => entry.sign !== '+').map((entry) => entry.text);
}

/**
 * The replacement lines. Context lines keep the file's own text: a loose match (trailing spaces,
 * indentation, typographic quotes) must not rewrite lines the patch did not mean to change.
 */
function newSide(entries: readonly PatchLine[], lines: readonly string[], at: number): string[] {
  const result: string[] = [];
  let offset = 0;
  for (const entry of entries) {
    if (entry.sign === '+') result.push(entry.text);
    else {
      if (entry.sign === ' ') result.push(lines[at + offset] ?? entry.text);
      offset++;
    }
  }
  return result;
}
