/**
 * Compiles a git-style glob into an anchored regular expression over `/`-separated paths:
 * `*` and `?` never cross `/`, `**` crosses any number of segments (`a/**\/b` matches `a/b`),
 * `[abc]`, `[!abc]` and `[^abc]` are classes, and `\x` is a literal `x`.
 */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === '\\' && i + 1 < pattern.length) {
      source += escapeRegExp(pattern[i + 1]!);
      i += 2;
    } else if (char === '*') {
      const double = pattern[i + 1] === '*';
      const atSegmentStart = i === 0 || pattern[i - 1] === '/';
      if (double && atSegmentStart && pattern[i + 2] === '/') {
        source += '(?:[^/]*/)*';
        i += 3;
      } else if (double && atSegmentStart && i + 2 === pattern.length) {
        source += '.*';
        i += 2;
      } else if (double) {
        source += '.*';
        i += 2;
      } else {
        source += '[^/]*';
        i += 1;
      }
    } else if (char === '?') {
      source += '[^/]';
      i += 1;
    } else if (char === '[') {
      const end = classEnd(pattern, i);
      if (end === -1) {
        source += '\\[';
        i += 1;
      } else {
        let body = pattern.slice(i + 1, end);
        let negate = false;
        if (body.startsWith('!') || body.startsWith('^')) {
          negate = true;
          body = body.slice(1);
        }
        source += `[${negate ? '^/' : ''}${body.replace(/\\/g, '\\\\').replace(/]/g, '\\]')}]`;
        i = end + 1;
      }
    } else {
      source += escapeRegExp(char);
      i += 1;
    }
  }
  return new RegExp(`^${source}$`);
}

/** Index of the `]` closing the class opened at `start`, or -1. A `]` right after `[`, `[!` or `[^` is literal. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '!' || pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1;
  while (i < pattern.length) {
    if (pattern[i] === ']') return i;
    i += 1;
  }
  return -1;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
