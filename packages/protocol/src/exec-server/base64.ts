/**
 * Decodes standard base64 with padding (what the exec-server wire carries), or returns undefined when
 * `text` is not exactly that. Node's decoder skips characters outside the alphabet, so any such
 * character shortens the result, which the length check catches; the URL-safe `-` and `_`, which Node
 * would accept, are refused. One decode serves as both check and result, several times faster than a
 * character-class regex on large output chunks.
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0) return undefined;
  if (text.includes('-') || text.includes('_')) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (text.length / 4) * 3 - padding ? bytes : undefined;
}

/** Whether `text` is standard base64 with padding. */
export function isBase64(text: string): boolean {
  return decodeBase64(text) !== undefined;
}
