import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { analyzeScript, type ScriptAnalysis } from './analyze-script.js';

/** A loaded bash grammar. Parsing is synchronous once loaded; every call frees its own tree. */
export interface BashParser {
  /** What a `bash -c` script contains, as far as policy cares (see `ScriptAnalysis`). */
  analyze(script: string): ScriptAnalysis;
}

let loading: Promise<BashParser> | undefined;

/**
 * Loads tree-sitter-bash (WebAssembly) once per process and returns the shared parser. The first call
 * costs a few milliseconds; later calls resolve at once. Nothing happens on import.
 */
export function loadBashParser(): Promise<BashParser> {
  loading ??= load().catch((error: unknown) => {
    // A failed load must not poison later attempts (a transient read error, say).
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(): Promise<BashParser> {
  // Imported here, not at the top: a process that never parses a script (`ux sandbox`) skips it.
  const { Language, Parser } = await import('web-tree-sitter');
  await Parser.init();
  // Resolved at run time so it works from src under vitest and from the built dist alike.
  const require = createRequire(import.meta.url);
  const grammarDir = dirname(require.resolve('tree-sitter-bash/package.json'));
  const language = await Language.load(join(grammarDir, 'tree-sitter-bash.wasm'));
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    analyze(script) {
      const tree = parser.parse(script);
      if (!tree) throw new Error('tree-sitter-bash returned no tree');
      try {
        return analyzeScript(tree.rootNode, script);
      } finally {
        tree.delete();
      }
    },
  };
}
