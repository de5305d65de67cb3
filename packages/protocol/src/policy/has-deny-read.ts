import type { FileSystemPolicy } from './file-system-policy.js';

/** Deny-read: a restricted policy with any `none` entry. Then running without a sandbox is never allowed. */
export function hasDenyRead(policy: FileSystemPolicy): boolean {
  return policy.kind === 'restricted' && policy.entries.some((entry) => entry.access === 'none');
}
