import { hasInvisibleText, visibleText } from './visible-text.js';

/**
 * A command's words (or other sandbox-chosen text) as ux puts them on one of its own lines: unchanged
 * when nothing in them is invisible, so an everyday command reads exactly as typed (`grep 'a\|b'`
 * keeps its one backslash), else the whole of it through `visibleText` (every control, bidi and
 * zero-width character escaped, every backslash doubled, so an escape cannot be forged). A reader who
 * is told that a text was escaped (`hasInvisibleText` of the original) can read it unambiguously;
 * one who is not sees the text as it is.
 *
 * Idempotent (what it returns holds nothing invisible), so each layer that quotes a text may apply it
 * without doubling what an earlier layer escaped.
 */
export function readableText(text: string): string {
  return hasInvisibleText(text) ? visibleText(text) : text;
}

/**
 * `JSON.stringify(value)` with every character `visibleText` would escape written as a `\uXXXX`
 * escape, so a JSON line (an event on stdout, a log line, a rule's words) printed to a terminal cannot
 * carry a C1 control, a bidi override or a zero-width character (`JSON.stringify` escapes only C0
 * controls). The value it encodes is the same.
 */
export function visibleJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined || !hasInvisibleText(json)) return json;
  let out = '';
  for (const char of json) {
    if (!hasInvisibleText(char)) out += char;
    else
      for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return out;
}
