import { readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

/**
 * Descriptors above stderr that a child would inherit (no close-on-exec flag), read from
 * /proc/self/fdinfo. Returns `undefined` where that cannot be known (not Linux).
 */
export function inheritableFds(): number[] | undefined {
  if (process.platform !== 'linux') return undefined;
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return undefined;
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
    } catch {
      // Closed between the listing and the read (the listing's own descriptor, for one).
    }
  }
  return found;
}
