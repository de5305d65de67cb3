/**
 * The error option of a required wire field: an absent field reads `missing field \`name\`` (the text
 * Codex's server uses); a present field of the wrong type keeps the schema's own message, so a wrong
 * type is never reported as missing.
 */
export function missingField(name: string) {
  return (issue: { input?: unknown }) =>
    issue.input === undefined ? `missing field \`${name}\`` : undefined;
}
