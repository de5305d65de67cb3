import { setFlagsFromString } from 'node:v8';
import { type BashParser, loadBashParser } from '@ux/orchestrator';

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) from here on. The bash grammar is
 * WebAssembly: optimising it in the background (TurboFan) costs about a second of CPU, and Node waits
 * for that work whenever its event loop is briefly idle, which stalls a short command by the same
 * second; the baseline compiler parses a command line in microseconds.
 *
 * Called just before the grammar loads, not at start: after any V8 flag change, V8 rejects the code
 * cache of every Node built-in loaded later (each then compiles from source, about 0.3 ms apiece and
 * 20 ms over a whole start-up), and a command of literal words (`ux exec -- make test`) never loads
 * the grammar at all.
 */
export function useBaselineWasmCompiler(): void {
  setFlagsFromString('--liftoff-only');
}

/** The orchestrator's grammar loader for the CLI's hosts (`loadBashParser` in its settings). */
export function loadBashParserOnBaseline(): Promise<BashParser> {
  useBaselineWasmCompiler();
  return loadBashParser();
}
