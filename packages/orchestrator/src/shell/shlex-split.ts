/**
 * Splits a command line into words the way a POSIX shell would without expanding anything: single
 * quotes, double quotes (with their four escapes) and backslashes. Returns `null` for an unterminated
 * quote. Used for the string examples of rule files (`match = ["git push origin"]`).
 */
export function shlexSplit(line: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === ' ' || char === '\t' || char === '\n') {
      if (word !== null) words.push(word);
      word = null;
    } else if (char === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) return null;
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (char === '"') {
      let value = '';
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        const next = line[j + 1];
        if (line[j] === '\\' && next !== undefined && '$`"\\\n'.includes(next)) {
          if (next !== '\n') value += next;
          j++;
        } else {
          value += line[j];
        }
      }
      if (j >= line.length) return null;
      word = (word ?? '') + value;
      i = j;
    } else if (char === '\\') {
      const next = line[i + 1];
      if (next === undefined) return null;
      i++;
      if (next !== '\n') word = (word ?? '') + next;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== null) words.push(word);
  return words;
}
