/**
 * A command's words (or any text a sandboxed command chose: a host name, a path it created) made safe
 * to show a person or a model around ux's own lines: every control character, bidi override or
 * isolate, and zero-width or invisible formatting character is written as a visible escape (`\r`,
 * `\n`, `\t`, `\e`, `\x07`, `\u202e`), and a backslash as `\\` so an escape cannot be forged. Nothing
 * else changes. A command's own output is data and is never passed through this.
 *
 * Without it, `touch x #\r\e[2K  command: ls` prints `command: ls` over the real words on a terminal,
 * and a `U+202E` reverses what a reader sees.
 */
export function visibleText(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\') out += '\\\\';
    else if (isInvisible(code)) out += escapeOne(char, code);
    else out += char;
  }
  return out;
}

/** Whether `text` would be changed by `visibleText` (so a caller can tell the reader it was). */
export function hasInvisibleText(text: string): boolean {
  for (const char of text) if (isInvisible(char.codePointAt(0)!)) return true;
  return false;
}

const NAMED: Record<string, string> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\x1b': '\\e',
  '\b': '\\b',
  '\f': '\\f',
  '\v': '\\v',
  '\0': '\\0',
};

function escapeOne(char: string, code: number): string {
  const named = NAMED[char];
  if (named) return named;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * C0 and C1 controls, DEL, bidi embeddings, overrides, isolates and marks, zero-width and other
 * invisible formatting characters (Unicode category Cf among them), line and paragraph separators,
 * and lone surrogates (what a terminal would render as nothing or as a movement).
 */
function isInvisible(code: number): boolean {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  if (code >= 0xd800 && code <= 0xdfff) return true;
  if (code === 0x00ad || code === 0x034f || code === 0x061c || code === 0x115f || code === 0x1160)
    return true;
  if (code === 0x17b4 || code === 0x17b5 || code === 0x180e) return true;
  if (code >= 0x200b && code <= 0x200f) return true; // zero-width space, joiners, LRM, RLM
  if (code >= 0x2028 && code <= 0x202e) return true; // separators, embeddings, overrides
  if (code >= 0x2060 && code <= 0x206f) return true; // word joiner, invisible operators, isolates
  if (code === 0x3164 || code === 0xfeff || code === 0xffa0) return true;
  if (code >= 0xfff9 && code <= 0xfffb) return true; // interlinear annotation
  if (code >= 0xe0000 && code <= 0xe007f) return true; // tags
  if (code >= 0x1d173 && code <= 0x1d17a) return true; // musical formatting
  return /\p{Cf}/u.test(String.fromCodePoint(code));
}
