type Compare = (a: string, b: string) => boolean;

// From strict to loose: models copy context with trailing spaces lost, indentation changed, or typographic
// punctuation replaced by ASCII (and the other way round). The first pass that matches wins.
const PASSES: Compare[] = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
  (a, b) => normalisePunctuation(a.trim()) === normalisePunctuation(b.trim()),
];

/**
 * Finds `pattern` as a run of consecutive lines in `lines`, at or after `start`, and returns the index of
 * its first line. With `endOfFile`, the run is first looked for at the very end of the file, then
 * anywhere after `start`. An empty pattern matches at `start`.
 */
export function seekSequence(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  endOfFile = false,
): number | undefined {
  if (pattern.length === 0) return start;
  const last = lines.length - pattern.length;
  if (last < 0) return undefined;
  if (endOfFile && last >= start) {
    for (const same of PASSES) if (matchesAt(lines, pattern, last, same)) return last;
  }
  for (const same of PASSES) {
    for (let at = start; at <= last; at++) if (matchesAt(lines, pattern, at, same)) return at;
  }
  return undefined;
}

function matchesAt(lines: readonly string[], pattern: readonly string[], at: number, same: Compare): boolean {
  for (let offset = 0; offset < pattern.length; offset++) {
    if (!same(lines[at + offset] ?? '', pattern[offset] ?? '')) return false;
  }
  return true;
}

const PUNCTUATION: Record<string, string> = {
  // dashes and the minus sign
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  // single quotes
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  // double quotes
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u201F': '"',
  // non-breaking and typographic spaces
  '\u00A0': ' ',
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2004': ' ',
  '\u2005': ' ',
  '\u2006': ' ',
  '\u2007': ' ',
  '\u2008': ' ',
  '\u2009': ' ',
  '\u200A': ' ',
  '\u202F': ' ',
  '\u205F': ' ',
  '\u3000': ' ',
};
const PUNCTUATION_PATTERN = new RegExp(`[${Object.keys(PUNCTUATION).join('')}]`, 'g');

/** Maps typographic dashes, quotes and spaces to their ASCII look-alikes. */
export function normalisePunctuation(text: string): string {
  return text.replace(PUNCTUATION_PATTERN, (char) => PUNCTUATION[char] ?? char);
}
