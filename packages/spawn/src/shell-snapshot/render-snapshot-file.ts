import type { CaptureOutput } from './parse-capture-output.js';
import { parseNulEnvironment } from './parse-capture-output.js';
import { parseExportP } from './parse-export-p.js';
import { quotePosix } from './quote-posix.js';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';

/**
 * Variables a shell sets or owns itself: never written to a snapshot (a fresh shell sets them, some are
 * read-only, and assigning zsh's `UID`/`USERNAME` would try to change user).
 */
export const SHELL_OWN_VARIABLES: ReadonlySet<string> = new Set([
  '_',
  'PWD',
  'OLDPWD',
  'SHLVL',
  'PPID',
  'UID',
  'EUID',
  'GID',
  'EGID',
  'USERNAME',
  'SHELLOPTS',
  'BASHOPTS',
  'BASHPID',
  'BASH_VERSINFO',
  'BASH_SUBSHELL',
  'BASH_EXECUTION_STRING',
  'LINENO',
  'RANDOM',
  'SECONDS',
  'HISTCMD',
  'ERRNO',
  'TTYIDLE',
  'ZSH_SUBSHELL',
  'ZSH_EXECUTION_STRING',
  'ARGC',
  'COLUMNS',
  'LINES',
]);

/** bash `set -o` options that are interactive, would change what commands print, or drop privileges. */
const BASH_SET_DENIED = new Set([
  'emacs',
  'vi',
  'history',
  'histexpand',
  'monitor',
  'xtrace',
  'verbose',
  'noexec',
  'onecmd',
  'privileged',
]);
/** bash `shopt` options a script cannot set (or that `expand_aliases` sets last). */
const BASH_SHOPT_DENIED = new Set(['login_shell', 'restricted_shell', 'expand_aliases']);
/** zsh options (lower case, no underscores) that describe how the shell was started, or trace. */
const ZSH_OPTIONS_DENIED = new Set([
  'login',
  'interactive',
  'shinstdin',
  'singlecommand',
  'monitor',
  'zle',
  'privileged',
  'restricted',
  'xtrace',
  'verbose',
  'exec',
  'rcs',
  'globalrcs',
]);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface RenderSnapshotInput {
  kind: SnapshotShellKind;
  shell: string;
  capturedAt: number;
  output: CaptureOutput;
  /** The environment the login shell started from. */
  startEnv: Record<string, string>;
  exclude?: (name: string) => boolean;
}

/**
 * The snapshot file's text, latin1 (one char per byte, written back byte for byte). Variables: only what
 * the login files changed — `export NAME='value'` for a variable they set or changed, `unset NAME` for
 * one they removed — so a command's own environment (a per-command variable, a value the door pins)
 * is not overwritten by the value it had at capture time. Then, for bash and zsh, the shell state:
 *
 * - bash: `unalias -a`; `shopt -s …`/`shopt -u …` (before the functions: `extglob` changes how they
 *   parse); variables; aliases (`alias -p`; they do not expand while the file is read); functions
 *   (`declare -f`) and `declare -fx` for exported ones; `umask`; `set -o`/`set +o` (last: `posix` mode
 *   or `errexit` must not bend the sourcing); `shopt -s expand_aliases`, so aliases work in `bash -c`.
 * - zsh: `unalias -m '*'`; `emulate` when it is not zsh; `setopt …`; variables; aliases (`alias -L`,
 *   global and suffix ones included); functions (`typeset -f`) read with aliases off (their bodies are
 *   already expanded); `umask`.
 * - sh: variables and `umask`.
 *
 * After the functions, builtins are called with `builtin` (a captured function may bear their name).
 * No function is dropped, `_`-prefixed ones included: a user function may call a `_helper`, and a
 * non-interactive login rarely loads completion systems (which is where such functions pile up).
 */
export function renderSnapshotFile(input: RenderSnapshotInput): { text: string; changedVariables: string[] } {
  const { kind, output } = input;
  const section = (name: string) => output.sections.get(name) ?? '';
  const lines: string[] = [
    `# ux shell snapshot of ${latin1(input.shell).replace(/[\x00-\x1f\x7f]/g, '?')} (${kind}), captured ${new Date(input.capturedAt).toISOString()}.`,
    '# Sourced by each command in place of the login files; written by ux, do not edit.',
  ];

  const captured =
    kind === 'sh' ? parseExportP(section('export-p')) : parseNulEnvironment(section('exports'));
  const kept = (name: string) =>
    IDENTIFIER.test(name) && !SHELL_OWN_VARIABLES.has(name) && !(input.exclude?.(name) ?? false);
  const startEnv = latin1Env(input.startEnv);
  const removed = Object.keys(startEnv)
    .filter((name) => kept(name) && !captured.has(name))
    .sort();
  const variables: string[] = [];
  const changedVariables = [...removed];
  if (removed.length > 0) variables.push(`unset ${removed.join(' ')}`);
  for (const [name, value] of [...captured].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!kept(name) || startEnv[name] === value) continue;
    variables.push(`export ${name}=${quotePosix(value)}`);
    changedVariables.push(name);
  }
  const umask = /^[0-7]{1,4}$/.test(section('umask').trim()) ? [`umask ${section('umask').trim()}`] : [];

  switch (kind) {
    case 'bash': {
      lines.push('\\unalias -a 2>/dev/null', ...bashShopt(section('shopt')));
      lines.push(...variables);
      // Aliases before functions (they do not expand while this file is read: `expand_aliases` comes
      // last), so a function named `alias` cannot take the alias lines over.
      lines.push(...trimmed(section('aliases')));
      // `declare -f` ends an exported function with a `declare -fx NAME` line of its own (not indented,
      // unlike a body): dropped, and written again below as a `builtin`.
      lines.push(...trimmed(section('functions').replace(/^declare -f[a-z]* \S+\n?/gm, '')));
      // From here on, builtins are called as such: a captured function may bear their name.
      lines.push(...exportedFunctions(section('function-attributes')));
      lines.push(...umask.map((line) => `builtin ${line}`));
      lines.push(...bashSet(section('set')).map((line) => `builtin ${line}`));
      lines.push('builtin shopt -s expand_aliases');
      break;
    }
    case 'zsh': {
      const emulation = section('emulate').trim();
      const kshOptionPrint = section('kshoptionprint').trim() === 'on' ? '\nkshoptionprint' : '';
      const options = zshOptions(section('setopt') + kshOptionPrint);
      lines.push("\\unalias -m '*' 2>/dev/null || \\builtin true");
      if (/^(sh|ksh|csh)$/.test(emulation)) lines.push(`emulate ${emulation}`);
      if (options.length > 0) lines.push(`setopt ${options.join(' ')}`);
      lines.push(...variables);
      lines.push(...trimmed(section('aliases')));
      // zsh expands aliases while it reads a function: the bodies `typeset -f` printed are already
      // expanded, so they are read with aliases off, then aliases are back as captured.
      const functions = trimmed(section('functions'));
      if (functions.length > 0) {
        lines.push('builtin unsetopt aliases', ...functions);
        if (!options.some((name) => name.toLowerCase().replace(/_/g, '') === 'noaliases'))
          lines.push('builtin setopt aliases');
      }
      lines.push(...umask.map((line) => `builtin ${line}`));
      break;
    }
    case 'sh':
      lines.push(...variables, ...umask);
      break;
  }
  return { text: `${lines.join('\n')}\n`, changedVariables: changedVariables.sort() };
}

function bashShopt(text: string): string[] {
  const on: string[] = [];
  const off: string[] = [];
  for (const line of text.split('\n')) {
    const match = /^shopt -([su]) ([a-z_0-9]+)$/.exec(line.trim());
    if (!match || BASH_SHOPT_DENIED.has(match[2]!)) continue;
    (match[1] === 's' ? on : off).push(match[2]!);
  }
  return [
    ...(on.length ? [`shopt -s ${on.join(' ')}`] : []),
    ...(off.length ? [`shopt -u ${off.join(' ')}`] : []),
  ];
}

function bashSet(text: string): string[] {
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    const match = /^set ([+-])o ([a-z-]+)$/.exec(line.trim());
    if (!match || BASH_SET_DENIED.has(match[2]!)) continue;
    lines.push(`set ${match[1]}o ${match[2]}`);
  }
  return lines;
}

function exportedFunctions(text: string): string[] {
  const lines = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^declare -([a-z]+) (\S+)$/.exec(line.trim());
    if (match?.[1]?.includes('x')) lines.add(`builtin declare -fx ${match[2]}`);
  }
  return [...lines];
}

function zshOptions(text: string): string[] {
  const names: string[] = [];
  for (const raw of text.split('\n')) {
    const name = raw.trim();
    if (!/^[A-Za-z_]+$/.test(name)) continue;
    const bare = name.toLowerCase().replace(/_/g, '');
    if (ZSH_OPTIONS_DENIED.has(bare) || (bare.startsWith('no') && ZSH_OPTIONS_DENIED.has(bare.slice(2))))
      continue;
    names.push(name);
  }
  return names;
}

/** A verbatim section's lines, without trailing blank ones. */
function trimmed(text: string): string[] {
  const body = text.replace(/\n+$/, '');
  return body === '' ? [] : [body];
}

/** A JavaScript (UTF-16) string as latin1 text of its UTF-8 bytes, to sit beside captured bytes. */
function latin1(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

function latin1Env(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) out[name] = latin1(value);
  return out;
}
