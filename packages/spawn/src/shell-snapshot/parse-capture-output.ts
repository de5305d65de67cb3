export interface CaptureOutput {
  /** stdout before the first marker: what the login files printed. */
  before: string;
  /** Each section's text (without the newline that precedes the next marker). */
  sections: Map<string, string>;
  /** Whether the begin and end markers were seen. */
  begun: boolean;
  ended: boolean;
  /** stdout after the end marker (a logout file, say). */
  after: string;
}

/**
 * Splits a capture's stdout (latin1: one char per byte) at its `\n<marker>:<section>\n` lines. The marker
 * is random per capture, so text a login file prints cannot fake a section.
 */
export function parseCaptureOutput(stdout: string, marker: string): CaptureOutput {
  const pattern = new RegExp(`\\n${marker}:([a-z-]+)\\n`, 'g');
  const sections = new Map<string, string>();
  let before = stdout;
  let begun = false;
  let ended = false;
  let after = '';
  let current: string | undefined;
  let from = 0;
  for (const match of stdout.matchAll(pattern)) {
    const name = match[1]!;
    if (current === undefined) {
      if (name !== 'begin') continue;
      before = stdout.slice(0, match.index);
      begun = true;
    } else {
      sections.set(current, stdout.slice(from, match.index));
    }
    from = match.index + match[0].length;
    current = name;
    if (name === 'end') {
      ended = true;
      after = stdout.slice(from);
      break;
    }
  }
  if (current !== undefined && !ended) sections.set(current, stdout.slice(from));
  return { before, sections, begun, ended, after };
}

/** NUL-separated `NAME=value` entries; entries without `=` or with an empty name are dropped. */
export function parseNulEnvironment(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const entry of text.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    vars.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return vars;
}
