import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeCodeCaches } from './command-bundle.js';

// `node dist/write-code-caches.cjs`: run by the build after the bundles are written, and again by
// hand after Node is upgraded (V8 rejects a cache made by another version; ux then starts without it).
writeCodeCaches(
  readdirSync(__dirname)
    .filter((name) => name.endsWith('-command.cjs'))
    .map((name) => join(__dirname, name)),
);
