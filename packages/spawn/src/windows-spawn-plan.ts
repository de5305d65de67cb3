import { InvalidArgumentsError, MissingCommandLineError, type TerminalSize } from '@ux/protocol/core';
import { windowsArgumentsLine, windowsCommandLine } from '@ux/protocol-utils';
import { DEFAULT_PTY_SIZE } from './spawn-constants.js';
import type { LocalSpawnRequest } from './spawn-escalation.js';
import { decideSpawnKind } from './spawn-kind.js';
import { spawnRequestIssues } from './spawn-request-issues.js';
import {
  checkWindowsWorkingDirectory,
  type WindowsPathKind,
  windowsProgramPath,
} from './windows-program-path.js';

/** The longest command line CreateProcessW accepts, in UTF-16 code units, its terminating NUL included. */
export const WINDOWS_MAX_COMMAND_LINE = 32_767;

/** What node-pty's `spawn(file, args, options)` is called with on Windows: ConPTY, never winpty. */
export interface WindowsPtySpawnOptions {
  cols: number;
  rows: number;
  cwd: string;
  env: Record<string, string>;
  useConpty: true;
  /** Windows' own ConPTY (kernel32), not the conpty.dll node-pty ships. */
  useConptyDll: false;
  conptyInheritCursor: false;
}

/** What `child_process.spawn(file, args, options)` is called with on Windows. */
export interface WindowsPipeSpawnOptions {
  cwd: string;
  env: Record<string, string>;
  /** The first word of the command line (libuv quotes it like every argument). */
  argv0: string;
  /** CREATE_NO_WINDOW: the child gets a console of its own that is never shown. */
  windowsHide: true;
  /** libuv quotes each argument by the C runtime's rules (the same as `windowsCommandLine`). */
  windowsVerbatimArguments: false;
  /** Not DETACHED_PROCESS: the child keeps a (hidden) console, so console programs behave. */
  detached: false;
  shell: false;
  stdio: ['pipe' | 'ignore', 'pipe', 'pipe'];
}

export type WindowsSpawnPlan =
  | {
      kind: 'pty';
      /** The program, resolved to a full path. */
      program: string;
      /** node-pty's arguments: the file, then the rest of the command line as one string (used verbatim). */
      file: string;
      args: string;
      options: WindowsPtySpawnOptions;
      /** The whole command line the child is started with. */
      commandLine: string;
    }
  | {
      kind: 'pipe' | 'pipe-with-stdin';
      program: string;
      file: string;
      args: string[];
      options: WindowsPipeSpawnOptions;
      commandLine: string;
    };

/**
 * Turns a spawn request into exactly what the Windows spawner hands node-pty (ConPTY) or child_process:
 * the program resolved by Windows rules, the command line quoted for the C runtime, the environment
 * exactly as given, and the options. Pure except for `kind` (what a path is), so it is golden-tested on
 * any OS. Throws `MissingCommandLineError`, `InvalidArgumentsError` (NUL bytes, bad or duplicate variable
 * names, a bad size, `arg0` on a PTY, an escalation socket, an `arg0` holding a quote or naming a batch
 * file, as `windowsCommandLine` of `@ux/protocol` refuses, a command line over 32,767 characters) or
 * `SpawnFailedError` (cwd or program missing, a batch file).
 */
export function planWindowsSpawn(request: LocalSpawnRequest, kind: WindowsPathKind): WindowsSpawnPlan {
  const { argv, cwd } = request;
  if (argv.length === 0) throw new MissingCommandLineError();
  validateWindowsRequest(request);
  checkWindowsWorkingDirectory(argv, cwd, kind);
  const program = windowsProgramPath(argv, request.env, cwd, kind);
  const env = { ...request.env };
  const spawnKind = decideSpawnKind(request);
  if (spawnKind === 'pty') {
    const size: TerminalSize = request.size ?? DEFAULT_PTY_SIZE;
    const commandLine = windowsCommandLine([program, ...argv.slice(1)], { tool: 'spawn' });
    checkLength(commandLine);
    return {
      kind: 'pty',
      program,
      file: program,
      args: windowsArgumentsLine(argv.slice(1)),
      options: {
        cols: size.cols,
        rows: size.rows,
        cwd,
        env,
        useConpty: true,
        useConptyDll: false,
        conptyInheritCursor: false,
      },
      commandLine,
    };
  }
  const argv0 = request.arg0 ?? argv[0]!;
  const commandLine = windowsCommandLine([argv0, ...argv.slice(1)], { tool: 'spawn' });
  checkLength(commandLine);
  return {
    kind: spawnKind,
    program,
    file: program,
    args: argv.slice(1),
    options: {
      cwd,
      env,
      argv0,
      windowsHide: true,
      windowsVerbatimArguments: false,
      detached: false,
      shell: false,
      stdio: [spawnKind === 'pipe-with-stdin' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    },
    commandLine,
  };
}

function checkLength(commandLine: string): void {
  if (commandLine.length + 1 > WINDOWS_MAX_COMMAND_LINE) {
    throw new InvalidArgumentsError({
      tool: 'spawn',
      issues: [
        {
          path: 'argv',
          message: `the command line is ${commandLine.length} characters; Windows accepts at most ${WINDOWS_MAX_COMMAND_LINE - 1}`,
        },
      ],
    });
  }
}

/** Refuses what Windows would reject or mangle. */
function validateWindowsRequest(request: LocalSpawnRequest): void {
  const issues = spawnRequestIssues(request);
  const seen = new Map<string, string>();
  for (const name of Object.keys(request.env)) {
    const folded = name.toUpperCase();
    const other = seen.get(folded);
    if (other !== undefined) {
      issues.push({
        path: `env.${name}`,
        message: `names the same variable as env.${other} (Windows variable names ignore case)`,
      });
    } else seen.set(folded, name);
  }
  if (request.tty && request.arg0 !== undefined && request.arg0 !== request.argv[0]) {
    issues.push({
      path: 'arg0',
      message:
        'cannot differ from argv[0] for a PTY on Windows (ConPTY starts the program its command line names)',
    });
  }
  if (request.escalation) {
    issues.push({ path: 'escalation', message: 'an escalation socket (ZshFork) is Unix only' });
  }
  if (issues.length > 0) throw new InvalidArgumentsError({ tool: 'spawn', issues });
}
