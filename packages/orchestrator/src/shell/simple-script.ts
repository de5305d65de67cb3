import type { ScriptAnalysis } from './analyze-script.js';
import type { BashParser } from './bash-parser.js';
import { shellInvocation } from './shell-invocation.js';

// A word bash takes literally: no quotes, expansions, globs, operators, comments or tildes.
const LITERAL_WORD = /^[A-Za-z0-9_\-./:,@%+^=]+$/;
const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'case',
  'esac',
  'for',
  'select',
  'while',
  'until',
  'do',
  'done',
  'in',
  'function',
  'time',
  'coproc',
]);

/**
 * The analysis of a script that is one simple command of literal words (`cargo test --release`,
 * `ls -la src`), worked out without the bash grammar; `undefined` for anything else. It is what the
 * grammar gives for such a script, and it spares a short-lived host loading the grammar at all.
 */
export function simpleScriptAnalysis(script: string): ScriptAnalysis | undefined {
  const words = script.trim().split(/[ \t]+/);
  const [first] = words;
  if (!first || RESERVED.has(first) || first.includes('=')) return undefined;
  if (!words.every((word) => LITERAL_WORD.test(word))) return undefined;
  return {
    parsed: true,
    plain: [words],
    heredoc: null,
    commands: [{ words, display: words }],
  };
}

/**
 * Whether policy might need the bash grammar for this argv: a shell script that is not one simple
 * command, or a direct argv with a word that could be such a script (`sudo bash -c 'rm "$x"'`).
 */
export function needsBashGrammar(argv: readonly string[]): boolean {
  const invocation = shellInvocation(argv);
  if (invocation) return simpleScriptAnalysis(invocation.script) === undefined;
  return !argv.every((word) => LITERAL_WORD.test(word));
}

/**
 * A parser for requests that do not need the grammar (`needsBashGrammar` is false): every script
 * policy can find in them is a single literal word or a simple command. Anything else means a caller
 * broke that rule.
 */
export const SIMPLE_SCRIPT_PARSER: BashParser = {
  analyze(script) {
    const analysis = simpleScriptAnalysis(script);
    if (!analysis)
      throw new Error(`the simple-script parser was asked for a full parse of ${JSON.stringify(script)}`);
    return analysis;
  },
};
