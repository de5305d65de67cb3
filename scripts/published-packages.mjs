// The workspace packages that are published (every package under packages/ and apps/ that is not
// private), read from their manifests. Shared by the release checks in this folder.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** @returns {{ dir: string, name: string, manifest: Record<string, unknown> }[]} sorted by dir */
export function publishedPackages(root = '.') {
  const found = [];
  for (const group of ['packages', 'apps']) {
    for (const entry of readdirSync(join(root, group)).sort()) {
      const dir = join(group, entry);
      const file = join(root, dir, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      if (!manifest.private) found.push({ dir, name: manifest.name, manifest });
    }
  }
  return found;
}
