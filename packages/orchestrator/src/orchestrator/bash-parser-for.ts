import type { BashParser } from '../shell/bash-parser.js';
import { needsBashGrammar, SIMPLE_SCRIPT_PARSER } from '../shell/simple-script.js';

/**
 * Which parser reads a request's scripts: the host's when it gave one; else the real grammar only
 * when a script needs it. A request whose scripts are all one simple command of literal words needs
 * no grammar, so a short-lived host (`ux exec -- make test`) never loads it.
 */
export function bashParserFor(options: {
  bashParser?: BashParser;
  loadBashParser: () => Promise<BashParser>;
}): (argv: readonly string[]) => Promise<BashParser> {
  return (argv) => {
    if (options.bashParser) return Promise.resolve(options.bashParser);
    return needsBashGrammar(argv) ? options.loadBashParser() : Promise.resolve(SIMPLE_SCRIPT_PARSER);
  };
}
