import { closeSync, readdirSync, readFileSync } from 'node:fs';

/**
 * Closes the descriptors this process inherited without close-on-exec. They would send every child
 * through the spawn helper, so a benchmark would measure the shell that started it, not ux.
 */
export function closeInheritedFds() {
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (fd <= 2) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags && (Number.parseInt(flags, 8) & 0o2000000) === 0) closeSync(fd);
    } catch {}
  }
}
