import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/** SHA-256 (hex) of a capability token, the only form the server keeps. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Reads a token file (surrounding whitespace trimmed) and returns its digest; the token is not kept. */
export function tokenDigestFromFile(path: string): string {
  if (!isAbsolute(path)) throw new Error(`the token file must be an absolute path, got ${path}`);
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new Error(`cannot read the token file ${path}: ${(error as Error).message}`);
  }
  if (token === '') throw new Error(`the token file ${path} is empty`);
  return tokenDigest(token);
}

/** Checks a 64-digit hex digest given on the command line. */
export function checkedDigest(hex: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('the token SHA-256 must be 64 hexadecimal digits');
  return hex.toLowerCase();
}

/** Whether an `Authorization` header carries `Bearer <token>` whose digest is `expected`. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const match = header === undefined ? null : /^Bearer (.+)$/.exec(header);
  if (!match) return false;
  const presented = Buffer.from(tokenDigest(match[1]!), 'hex');
  const wanted = Buffer.from(expected, 'hex');
  return presented.length === wanted.length && timingSafeEqual(presented, wanted);
}
