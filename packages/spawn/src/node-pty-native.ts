import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

/** The terminal node-pty's native `fork` hands back: the master descriptor, the child, the slave's path. */
export interface NativeTerminal {
  fd: number;
  pid: number;
  pty: string;
}

/** node-pty's native module (node-pty 1.1.0), used without its JavaScript wrapper. */
export interface NodePtyNative {
  fork(
    file: string,
    args: string[],
    env: string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onExit: (code: number, signal: number) => void,
  ): NativeTerminal;
  resize(fd: number, cols: number, rows: number): void;
  /** node-pty's own spawn helper (used on macOS). */
  helperPath: string;
}

/**
 * Loads node-pty's native fork and resize. Its JavaScript wrapper is bypassed on purpose: it adds
 * TERM and PWD to the environment, and it reports exit only after the terminal closes, where its
 * reader can stall and drop the last output of a command (measured: 20–45% of runs lost the tail of a
 * 20 KB write). ux reads the master itself and holds the slave open until the output has drained.
 */
export function loadNodePtyNative(): NodePtyNative {
  const require = createRequire(import.meta.url);
  const utilsPath = require.resolve('node-pty/lib/utils.js');
  const utils = require(utilsPath) as {
    loadNativeModule(name: string): { dir: string; module: NodePtyNative };
  };
  const native = utils.loadNativeModule('pty');
  return {
    fork: native.module.fork.bind(native.module),
    resize: native.module.resize.bind(native.module),
    helperPath: resolve(dirname(utilsPath), native.dir, 'spawn-helper'),
  };
}
