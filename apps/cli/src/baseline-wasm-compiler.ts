import { setFlagsFromString } from 'node:v8';

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) from here on. The bash grammar is
 * WebAssembly: optimising it in the background (TurboFan) costs about a second of CPU, and Node waits
 * for that work whenever its event loop is briefly idle, which stalls a short command by the same
 * second; the baseline compiler parses a command line in microseconds.
 *
 * Call it once a command's modules are loaded, before the grammar is: after any V8 flag changes, V8
 * rejects the code cache of every Node built-in loaded later, and compiling them from source cost
 * about 20 ms of each start-up when this ran first.
 */
export function useBaselineWasmCompiler(): void {
  setFlagsFromString('--liftoff-only');
}
