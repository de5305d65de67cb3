import type { ExecServerListen, ExecServerSettings } from '@ux/exec-server';
import { UsageError } from './usage-error.js';

const HELP_COMMAND = 'ux exec-server --help';

/** `ux exec-server`'s command line: `runExecServer`'s settings, or a request for the help. */
export interface ExecServerArgs extends ExecServerSettings {
  help: boolean;
  onDisconnect: 'keep' | 'terminate';
  /** WebSocket only: also shut down when stdin closes (stdio always does). */
  exitOnStdinClose: boolean;
  /** Sandbox backend ids to offer (default: every one the host registers). */
  sandboxBackends?: string[];
}

export const EXEC_SERVER_HELP = `Usage: ux exec-server --listen <stdio | ws://IP:PORT> [options]

Runs a process host that speaks Codex's exec-server JSON-RPC protocol.

  --listen stdio              one connection on stdin/stdout (for ssh, kubectl exec -i, a parent process);
                              the server stops when stdin closes
  --listen ws://IP:PORT       WebSocket; use a loopback IP unless remote clients must connect; PORT 0 picks
                              a free port and the bound URL is printed on stdout
  --ws-token-file PATH        WebSocket clients must send "Authorization: Bearer <token>" with the token in
                              this file (absolute path; surrounding whitespace ignored)
  --ws-token-sha256 HEX       ...or with a token whose SHA-256 is HEX (64 hex digits)
  --ws-auth capability-token  accepted for compatibility with Codex (the only mode)
  --on-disconnect keep|terminate
                              keep (default): a client's processes run on after it disconnects, until
                              terminated, resumed (initialize.resumeSessionId) or the server stops;
                              terminate: kill them when the connection ends
  --keep-detached SECONDS     with keep: end a disconnected client's processes if it has not resumed
                              its session within SECONDS (1 to 86400; default: no limit)
  --exit-on-stdin-close       WebSocket mode: also stop when stdin closes
  --sandbox-backends a,b      sandbox backends a "sandbox" request may use, in order of preference (default: sandbox_backends, else all)
  -h, --help                  this help

The server stops cleanly on SIGINT and SIGTERM: every process it started is killed first.
`;

/** Parses `ux exec-server` arguments; a mistake throws a `UsageError` naming it (exit code 2). */
export function parseExecServerArgs(args: readonly string[]): ExecServerArgs {
  let listen: ExecServerListen | undefined;
  const result: Omit<ExecServerArgs, 'listen'> = {
    help: false,
    onDisconnect: 'keep',
    exitOnStdinClose: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? splitOnce(arg) : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = args[i + 1];
      if (next === undefined || next.startsWith('--')) throw usageError(`${flag} needs a value`);
      i += 1;
      return next;
    };
    switch (flag) {
      case '-h':
      case '--help':
        result.help = true;
        break;
      case '--listen':
        listen = parseListen(value());
        break;
      case '--ws-token-file':
        result.tokenFile = value();
        break;
      case '--ws-token-sha256':
        result.tokenSha256 = value();
        break;
      case '--ws-auth': {
        const mode = value();
        if (mode !== 'capability-token') {
          throw usageError(`--ws-auth ${mode} is not supported; the only mode is capability-token`);
        }
        break;
      }
      case '--on-disconnect': {
        const mode = value();
        if (mode !== 'keep' && mode !== 'terminate') {
          throw usageError(`--on-disconnect must be keep or terminate, got ${JSON.stringify(mode)}`);
        }
        result.onDisconnect = mode;
        break;
      }
      case '--keep-detached': {
        const text = value();
        const seconds = Number(text);
        if (!/^\d+$/.test(text) || seconds < 1 || seconds > 86_400)
          throw usageError(
            `--keep-detached takes whole seconds from 1 to 86400, got ${JSON.stringify(text)}`,
          );
        result.detachedTimeoutMs = seconds * 1000;
        break;
      }
      case '--exit-on-stdin-close':
        result.exitOnStdinClose = true;
        break;
      case '--sandbox-backends':
        result.sandboxBackends = value()
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean);
        break;
      default:
        throw usageError(`unknown option ${JSON.stringify(arg)}`);
    }
  }
  if (result.help) return { ...result, listen: listen ?? { kind: 'stdio' } };
  if (result.detachedTimeoutMs !== undefined && result.onDisconnect === 'terminate')
    throw usageError('--keep-detached applies to --on-disconnect keep; terminate ends processes at once');
  if (!listen) throw usageError('--listen is required: --listen stdio or --listen ws://127.0.0.1:PORT');
  if (listen.kind === 'stdio') {
    if (result.tokenFile !== undefined || result.tokenSha256 !== undefined) {
      throw usageError('--ws-token-file and --ws-token-sha256 apply to --listen ws:// only');
    }
  } else if ((result.tokenFile === undefined) === (result.tokenSha256 === undefined)) {
    throw usageError(
      'WebSocket connections need a capability token: pass exactly one of --ws-token-file PATH or --ws-token-sha256 HEX',
    );
  }
  return { ...result, listen };
}

function splitOnce(arg: string): [string, string] {
  const at = arg.indexOf('=');
  return [arg.slice(0, at), arg.slice(at + 1)];
}

function parseListen(text: string): ExecServerListen {
  if (text === 'stdio' || text === 'stdio://') return { kind: 'stdio' };
  if (/^wss:/i.test(text)) {
    throw usageError(`--listen ${text}: wss is not served directly; put a TLS proxy in front of ws://`);
  }
  const match = /^ws:\/\/(\[[0-9A-Fa-f:.]+\]|[^:/[\]]+):(\d{1,5})\/?$/.exec(text);
  if (!match) {
    throw usageError(
      `--listen ${JSON.stringify(text)} is neither stdio nor ws://IP:PORT (for example ws://127.0.0.1:4500; port 0 picks a free one)`,
    );
  }
  const port = Number(match[2]);
  if (port > 65535) throw usageError(`--listen ${text}: port ${port} is out of range`);
  return { kind: 'websocket', host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

function usageError(message: string): UsageError {
  return new UsageError(message, HELP_COMMAND);
}
