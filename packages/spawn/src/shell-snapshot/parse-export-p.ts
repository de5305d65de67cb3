/**
 * The variables in the output of a POSIX shell's `export -p` (dash, ash, busybox): lines of the form
 * `export NAME='value'` where the value is a run of single-quoted, double-quoted and backslash-escaped
 * pieces that may span lines. `export NAME` (exported but unset) is skipped. Text is handled as
 * latin1 (one char per byte), so any byte survives. Stops quietly at text it cannot read.
 */
export function parseExportP(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  let i = 0;
  const n = text.length;
  while (i < n) {
    // Skip blank lines.
    while (i < n && text[i] === '\n') i++;
    if (i >= n) break;
    const head = /^export[ \t]+([A-Za-z_][A-Za-z0-9_]*)(=?)/.exec(text.slice(i, i + 4200));
    if (!head) {
      // Not an export line: skip it.
      const next = text.indexOf('\n', i);
      i = next < 0 ? n : next + 1;
      continue;
    }
    i += head[0].length;
    const name = head[1]!;
    if (head[2] !== '=') {
      const next = text.indexOf('\n', i);
      i = next < 0 ? n : next + 1;
      continue;
    }
    let value = '';
    for (;;) {
      if (i >= n || text[i] === '\n') break;
      const c = text[i]!;
      if (c === "'") {
        const end = text.indexOf("'", i + 1);
        if (end < 0) return vars;
        value += text.slice(i + 1, end);
        i = end + 1;
      } else if (c === '"') {
        i++;
        for (;;) {
          if (i >= n) return vars;
          const d = text[i]!;
          if (d === '"') {
            i++;
            break;
          }
          if (d === '\\' && i + 1 < n && '$`"\\\n'.includes(text[i + 1]!)) {
            if (text[i + 1] !== '\n') value += text[i + 1];
            i += 2;
          } else {
            value += d;
            i++;
          }
        }
      } else if (c === '\\') {
        if (i + 1 < n && text[i + 1] !== '\n') value += text[i + 1];
        i += 2;
      } else if (c === ' ' || c === '\t') {
        // An unquoted blank ends the word; the rest of the line is not part of the value.
        const next = text.indexOf('\n', i);
        i = next < 0 ? n : next;
        break;
      } else {
        value += c;
        i++;
      }
    }
    vars.set(name, value);
  }
  return vars;
}
