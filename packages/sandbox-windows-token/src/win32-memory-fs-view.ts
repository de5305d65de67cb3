import { win32 } from 'node:path';
import type { FsView } from '@ux/protocol-utils';

/**
 * An in-memory `FsView` with Windows semantics, for planner tests on any OS: names compare
 * case-insensitively, `\` separates, a key ending in `\` is a directory, and a value `-> target` is a
 * symlink or junction. `realpath` answers with the stored spelling, as Windows does.
 */
export function win32MemoryFsView(entries: Record<string, string>): FsView {
  type Entry = { path: string; kind: 'file' | 'dir' | 'symlink'; content: string };
  const table = new Map<string, Entry>();
  const key = (path: string) => win32.normalize(path).replace(/\\+$/, '').toLowerCase();
  const addParents = (path: string) => {
    for (let dir = win32.dirname(path); dir !== win32.dirname(dir); dir = win32.dirname(dir)) {
      if (!table.has(key(dir))) table.set(key(dir), { path: dir, kind: 'dir', content: '' });
    }
  };
  for (const [raw, content] of Object.entries(entries)) {
    const isDir = raw.endsWith('\\');
    const path = isDir ? raw.slice(0, -1) : raw;
    addParents(path);
    const kind = isDir ? 'dir' : content.startsWith('-> ') ? 'symlink' : 'file';
    table.set(key(path), { path, kind, content: kind === 'symlink' ? content.slice(3) : content });
  }
  const resolve = (path: string, depth = 0): string | undefined => {
    if (depth > 16) return undefined;
    const normal = win32.normalize(path);
    const root = win32.parse(normal).root;
    const parts = normal.slice(root.length).split('\\').filter(Boolean);
    let current = root.replace(/\\$/, '');
    for (let i = 0; i < parts.length; i++) {
      const next = `${current}\\${parts[i]}`;
      const entry = table.get(key(next));
      if (!entry) return undefined;
      if (entry.kind === 'symlink') {
        const target = win32.resolve(win32.dirname(entry.path), entry.content);
        return resolve([target, ...parts.slice(i + 1)].join('\\'), depth + 1);
      }
      current = entry.path;
    }
    return current === root.replace(/\\$/, '') ? root : current;
  };
  return {
    kind(path) {
      if (win32.parse(win32.normalize(path)).root === win32.normalize(path)) return 'dir';
      const parent = resolve(win32.dirname(path));
      const entry = table.get(key(parent === undefined ? path : win32.join(parent, win32.basename(path))));
      return entry?.kind;
    },
    readFile(path) {
      const real = resolve(path);
      const entry = real === undefined ? undefined : table.get(key(real));
      return entry?.kind === 'file' ? entry.content : undefined;
    },
    readdir(path) {
      const real = resolve(path);
      if (real === undefined) return [];
      const prefix = `${key(real)}\\`;
      return [...table.entries()]
        .filter(([name]) => name.startsWith(prefix) && !name.slice(prefix.length).includes('\\'))
        .map(([, entry]) => win32.basename(entry.path))
        .sort();
    },
    realpath: (path) => resolve(path),
  };
}
