// Runs the real Codex CLI (`codex exec`, 0.169.0 from this folder's node_modules) hermetically: its own
// CODEX_HOME and HOME, a configuration that points the model at a loopback server and switches off every
// start-up task that would reach the internet, a minimal environment (no proxy variables, no API keys),
// and a deadline after which its whole process group is killed.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The native binary the npm package's launcher would run (Linux x64, musl build). */
export const CODEX = join(
  here,
  'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
);

export function assertCodexInstalled(): void {
  if (!existsSync(CODEX))
    throw new Error(`Codex is not installed: run \`npm ci --prefix ${here}\` (expected ${CODEX})`);
}

/** One `[mcp_servers.NAME]` entry: a stdio server Codex starts and offers as the namespace `mcp__NAME`. */
export interface McpServer {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A TOML string (JSON's escapes are a subset of TOML's basic strings). */
const str = (value: string) => JSON.stringify(value);

/**
 * CODEX_HOME/config.toml for a hermetic run. Each switch below removes a request Codex 0.169.0 makes
 * at start-up (seen with `strace -f -e trace=connect,sendto,sendmmsg`): the curated plugin sync
 * (`git ls-remote` of github.com, then api.github.com, then chatgpt.com), the update check
 * (api.github.com) and analytics. What is left talks to 127.0.0.1 only.
 */
export function codexConfig(options: { baseUrl: string; mcpServers: McpServer[] }): string {
  const lines = [
    'model = "scripted-model"',
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    // Codex's own shell snapshot (a login shell of the user's) is for its own shell tools, not used here.
    'shell_snapshot = false',
    '',
    '[model_providers.scripted]',
    'name = "scripted"',
    `base_url = ${str(options.baseUrl)}`,
    'wire_api = "responses"',
    // A failure of the scripted server should end the run at once, not after retries with back-off.
    'request_max_retries = 0',
    'stream_max_retries = 0',
  ];
  for (const server of options.mcpServers) {
    lines.push(
      '',
      `[mcp_servers.${server.name}]`,
      `command = ${str(server.command)}`,
      `args = [${server.args.map(str).join(', ')}]`,
      `cwd = ${str(server.cwd)}`,
      // Without it Codex asks the person before every MCP tool call; `codex exec` cannot ask, and
      // the call would be cancelled before it reached the server.
      'default_tools_approval_mode = "approve"',
      '',
      `[mcp_servers.${server.name}.env]`,
      ...Object.entries(server.env).map(([key, value]) => `${key} = ${str(value)}`),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** One line of `codex exec --json`: `thread.started`, `item.completed`, `turn.completed`, … */
export interface CodexEvent {
  type: string;
  item?: { id: string; type: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface CodexExecResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The JSONL events of `--json`, parsed. */
  events: CodexEvent[];
  stdout: string;
  /** Codex's log lines; with the RUST_LOG set here they include each MCP server's stderr. */
  stderr: string;
}

/**
 * `codex exec --json --ephemeral --skip-git-repo-check PROMPT` in `cwd`, with stdin closed. The
 * environment is built here, not inherited: PATH, HOME, CODEX_HOME, a UTF-8 locale, and a RUST_LOG that
 * makes Codex log what its MCP servers print on stderr (`MCP server stderr (…): …`).
 */
export function runCodexExec(options: {
  codexHome: string;
  home: string;
  cwd: string;
  prompt: string;
  timeoutMs: number;
  /** PATH for Codex (and what it passes on); default /usr/local/bin:/usr/bin:/bin. */
  path?: string;
  /** More log targets for RUST_LOG, e.g. `info` to see everything Codex does. */
  rustLog?: string;
}): Promise<CodexExecResult> {
  // The scripted model is unknown to Codex, which warns so at every turn: silenced, to keep the log
  // readable in a failure's diagnostics.
  const rustLog = [
    'warn',
    'codex_models_manager=error',
    'codex_rmcp_client::stdio_server_launcher=info',
    options.rustLog,
  ]
    .filter(Boolean)
    .join(',');
  return new Promise((resolve, reject) => {
    const argv = [
      'exec',
      '--json',
      '--ephemeral',
      '--skip-git-repo-check',
      '--color',
      'never',
      options.prompt,
    ];
    // UX_INTEROP_STRACE=FILE: record every connect and send of Codex and its children (the MCP server,
    // the commands) in FILE, to check that nothing leaves 127.0.0.1 (README.md says how to read it).
    const strace = process.env.UX_INTEROP_STRACE;
    const child = spawn(
      strace ? 'strace' : CODEX,
      strace ? ['-f', '-e', 'trace=connect,sendto,sendmsg,sendmmsg', '-o', strace, CODEX, ...argv] : argv,
      {
        cwd: options.cwd,
        env: {
          PATH: options.path ?? '/usr/local/bin:/usr/bin:/bin',
          HOME: options.home,
          CODEX_HOME: options.codexHome,
          LANG: 'C.UTF-8',
          RUST_LOG: rustLog,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so that a run past the deadline is ended whole (Codex and its servers).
        detached: true,
      },
    );
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      const events = stdout.split('\n').flatMap((line) => {
        if (!line.startsWith('{')) return [];
        try {
          return [JSON.parse(line) as CodexEvent];
        } catch {
          return [{ type: 'unreadable', line }];
        }
      });
      resolve({ status, signal, timedOut, events, stdout, stderr });
    });
  });
}

/** Every live process whose command line contains one of `needles`, as `PID COMMAND`. */
function findProcesses(needles: readonly string[]): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (needles.some((needle) => command.includes(needle))) found.push(`${name} ${command}`);
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/**
 * The processes still alive whose command line mentions one of `needles` (a run's temporary directory,
 * a marker in a command), after waiting up to `graceMs` for them to go: a server that is closing may
 * take a moment. An empty list means nothing was left behind.
 */
export async function processesMentioning(needles: readonly string[], graceMs: number): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const found = findProcesses(needles);
    if (found.length === 0 || Date.now() >= deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
