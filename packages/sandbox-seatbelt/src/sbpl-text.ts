/**
 * Seatbelt's profile reader fails the whole profile with "Error reading string" on a string literal longer
 * than about 1 KiB. Every literal ux writes stays at or below this many UTF-8 bytes.
 */
export const SBPL_STRING_MAX_BYTES = 900;

/** A plain SBPL string literal. Only ux's own constants and parameter names go here, never request paths. */
export function sbplString(text: string): string {
  checkLiteral(text, 'string');
  if (text.includes('\\'))
    throw new Error(`SBPL string ${JSON.stringify(text)} must not contain a backslash`);
  return `"${text}"`;
}

/** An SBPL regular-expression literal (`#"…"`): backslashes reach the regex engine unchanged. */
export function sbplRegex(source: string): string {
  checkLiteral(source, 'regex');
  return `#"${source}"`;
}

/** A path taken from a `-D` parameter: the path itself never enters the profile text. */
export function sbplParam(name: string): string {
  if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`invalid SBPL parameter name ${JSON.stringify(name)}`);
  return `(param "${name}")`;
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function checkLiteral(text: string, what: string): void {
  // A quote would end the literal early, and control characters have no portable spelling in SBPL.
  if (/["\u0000-\u001f\u007f]/.test(text)) {
    throw new Error(`SBPL ${what} ${JSON.stringify(text)} must not contain a quote or control character`);
  }
  if (utf8Length(text) > SBPL_STRING_MAX_BYTES) {
    throw new Error(
      `SBPL ${what} is ${utf8Length(text)} bytes, over the ${SBPL_STRING_MAX_BYTES}-byte limit`,
    );
  }
}
