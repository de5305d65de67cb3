import { quotePosix } from './quote-posix.js';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';

/** The sections a capture prints, in this order, each after a `\n<marker>:<name>\n` line. */
export const CAPTURE_SECTIONS = {
  bash: ['begin', 'set', 'shopt', 'umask', 'functions', 'function-attributes', 'aliases', 'exports', 'end'],
  zsh: ['begin', 'emulate', 'setopt', 'kshoptionprint', 'umask', 'functions', 'aliases', 'exports', 'end'],
  sh: ['begin', 'umask', 'export-p', 'end'],
} as const satisfies Record<SnapshotShellKind, readonly string[]>;

/**
 * The script a login shell runs (as `SHELL -lc SCRIPT`) once its login files are read. It prints the
 * marker, then the shell's state in sections; Node turns them into the snapshot file. Every command is
 * written so the login files cannot change what it does: `\builtin` / `\command` skip aliases and
 * functions of the same name, option states are printed before anything is changed, and the rest runs
 * with aliases, tracing and `errexit`/`nounset` off (zsh: under `emulate -R zsh`, so `KSH_ARRAYS`,
 * `SH_WORD_SPLIT` and the like cannot bend it, parsed by `eval` once aliases are off).
 *
 * Exported variables are printed NUL-separated as `NAME=value` from shell builtins (values may hold
 * newlines, quotes and any byte but NUL); `sh` prints `export -p`, which POSIX makes re-readable.
 *
 * With `then` (a file the host writes once it has read the capture), the shell goes on to source it.
 */
export function captureScript(kind: SnapshotShellKind, marker: string, then?: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(marker)) throw new Error(`captureScript: unsafe marker ${marker}`);
  const script = (() => {
    switch (kind) {
      case 'bash':
        return bashScript((name) => `\\builtin printf '\\n%s\\n' '${marker}:${name}'`);
      case 'zsh':
        return zshScript(
          (name) => `\\builtin printf '\\n%s\\n' '${marker}:${name}'`,
          (name) => `builtin printf "\\n%s\\n" "${marker}:${name}"`,
        );
      case 'sh':
        return shScript((name) => `\\command printf '\\n%s\\n' '${marker}:${name}'`);
    }
  })();
  return then === undefined ? script : `${script}\n${waitThenSource(kind, then)}`;
}

/**
 * The end of a capture that goes on in the same process (the folded load check): wait until the host
 * has written `file` (it renames it into place whole), then source it. The host writes it only after
 * it read the capture; it ends the process group instead when it will not. The wait spins on a
 * builtin: the host takes a millisecond or two, and a sleep would cost a process per round.
 */
function waitThenSource(kind: SnapshotShellKind, file: string): string {
  const name = quotePosix(file);
  const run = kind === 'sh' ? '\\command' : '\\builtin';
  const line = `while ! ${run} test -e ${name}; do ${run} :; done; ${run} . ${name}`;
  // zsh parsed the whole script with the login files' aliases on: reserved words go through `eval`,
  // which parses them now that aliases are off.
  return kind === 'zsh' ? `\\builtin eval ${quotePosix(line)}` : line;
}

function bashScript(section: (name: string) => string): string {
  return [
    section('begin'),
    section('set'),
    '\\builtin set +o',
    section('shopt'),
    '\\builtin shopt -p',
    // bash reads a -c string a line at a time: from the next line on, no alias of the login files applies.
    '\\builtin shopt -u expand_aliases',
    '\\builtin set +e +u +x +v',
    section('umask'),
    '\\builtin umask',
    section('functions'),
    '\\builtin declare -f',
    section('function-attributes'),
    '\\builtin declare -F',
    section('aliases'),
    '\\builtin alias -p',
    section('exports'),
    // A pipeline's subshells see every variable; the names are identifiers, one a line.
    '\\builtin compgen -e | while IFS= \\builtin read -r __ux_name; do',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    '  [ -n "${!__ux_name+set}" ] && \\builtin printf \'%s=%s\\0\' "$__ux_name" "${!__ux_name}"',
    'done',
    section('end'),
  ].join('\n');
}

function zshScript(section: (name: string) => string, bodySection: (name: string) => string): string {
  // zsh parses a whole -c string before it runs it, with the login files' aliases (global ones too)
  // active: the part that needs reserved words is parsed later, by `eval`, once aliases are off.
  const body = [
    bodySection('functions'),
    'builtin typeset -f',
    bodySection('aliases'),
    'builtin alias -L',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    'if (( ! ${+parameters} )); then',
    '  builtin print -ru2 -- "ux: zsh/parameter is not available: cannot list exported variables"',
    '  builtin exit 90',
    'fi',
    bodySection('exports'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    'for __ux_name in ${(k)parameters}; do',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    '  [[ ${parameters[$__ux_name]} == *export* && ${parameters[$__ux_name]} != *readonly* ]] || continue',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    '  builtin printf "%s=%s\\0" "$__ux_name" "${(P)__ux_name}"',
    'done',
    bodySection('end'),
  ].join('\n');
  if (body.includes("'")) throw new Error('captureScript: the zsh body must not contain a single quote');
  return [
    section('begin'),
    section('emulate'),
    '\\builtin emulate',
    section('setopt'),
    // `setopt` lists what differs from the emulation's defaults, unless KSH_OPTION_PRINT changes its form.
    '( \\builtin unsetopt kshoptionprint; \\builtin setopt )',
    '\\builtin zmodload -i zsh/parameter 2>/dev/null',
    section('kshoptionprint'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    '\\builtin print -r -- "${options[kshoptionprint]}"',
    section('umask'),
    '\\builtin umask',
    // Options are printed: now plain zsh (no KSH_ARRAYS, SH_WORD_SPLIT, errexit…), without aliases.
    '\\builtin emulate -R zsh',
    '\\builtin unsetopt aliases',
    `\\builtin eval '${body}'`,
  ].join('\n');
}

function shScript(section: (name: string) => string): string {
  return [
    section('begin'),
    section('umask'),
    '\\command umask',
    section('export-p'),
    '\\command export -p',
    section('end'),
  ].join('\n');
}
