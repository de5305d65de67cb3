import { createHash, randomBytes } from 'node:crypto';

/** The authority and first sub-authority Windows uses for capability SIDs (`S-1-15-3-1024-…`). */
const CAPABILITY_PREFIX = 'S-1-15-3-1024';

/**
 * The capability SID the restricted token carries and writable roots are granted to. It is derived from
 * the sandbox id and the exact set of writable roots, so a grant left on disk for one set of roots can
 * never widen a sandbox with another set (a read-only run, for one, gets a SID nothing was granted to).
 * Capability SIDs are not accounts: nothing but a token that lists this SID gains from an ACE for it.
 */
export function capabilitySidFor(sandboxId: string, writableRoots: readonly string[]): string {
  const roots = [...new Set(writableRoots.map((root) => root.toLowerCase()))].sort();
  const digest = createHash('sha256')
    .update(JSON.stringify(['ux-windows-token', sandboxId, roots]))
    .digest();
  return sidFromBytes(digest);
}

/** A fresh capability SID for one run: deny ACEs and short-lived grants are made to it and removed after. */
export function randomRunSid(): string {
  return sidFromBytes(randomBytes(32));
}

function sidFromBytes(bytes: Buffer): string {
  const words = Array.from({ length: 8 }, (_, i) => bytes.readUInt32LE(i * 4));
  return `${CAPABILITY_PREFIX}-${words.join('-')}`;
}
