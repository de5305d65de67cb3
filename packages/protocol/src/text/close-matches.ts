/**
 * Candidates within a small edit distance of `word` (or sharing a prefix with it), closest first.
 * Used for "did you mean" hints on unknown keys and ids.
 */
export function closeMatches(word: string, candidates: Iterable<string>, limit = 3): string[] {
  const lower = word.toLowerCase();
  const scored: { candidate: string; distance: number }[] = [];
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const distance = editDistance(lower, other);
    const threshold = Math.max(2, Math.floor(Math.max(lower.length, other.length) / 3));
    const sharesStem = lower.length >= 3 && (other.includes(lower) || lower.includes(other));
    if (distance <= threshold || sharesStem)
      scored.push({ candidate, distance: sharesStem ? Math.min(distance, 1) : distance });
  }
  return scored
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map((entry) => entry.candidate);
}

/** Levenshtein distance with adjacent transpositions counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** ` (did you mean "x" or "y"?)`, or an empty string when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const matches = closeMatches(word, candidates);
  if (matches.length === 0) return '';
  return ` (did you mean ${matches.map((m) => `"${m}"`).join(' or ')}?)`;
}
