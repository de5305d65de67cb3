import { ApplyPatchError } from './apply-patch-error.js';
import { type ParsedPatch, parsePatch } from './parse-patch.js';

export interface ApplyPatchInvocation {
  /** The patch text as given (heredoc body or argument). */
  patch: string;
  parsed: ParsedPatch;
  /** The directory of a leading `cd DIR &&`, as written: resolve it against the command's cwd. */
  workdir?: string;
}

const COMMAND_NAMES = new Set(['apply_patch', 'applypatch']);
const SHELLS = new Set(['bash', 'zsh', 'sh']);
const SHELL_FLAGS = new Set(['-c', '-lc']);

// `cd DIR && ` with exactly one plain, single-quoted or simple double-quoted argument.
const CD_PREFIX = /^cd[ \t]+('[^'\n]*'|"[^"$`\\\n]*"|[^\s'"$`\\;&|<>()~#][^\s'"$`\\;&|<>()]*)[ \t]*&&[ \t]*/;
const COMMAND = /^(apply_patch|applypatch)(?=[\s<'"]|$)/;
// `<<EOF`, `<<'EOF'`, `<<"EOF"`, `<<-EOF`: nothing else may follow on that line.
const HEREDOC_HEADER = /^[ \t]*<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|([A-Za-z0-9_.-]+))[ \t]*\r?\n/;
// The patch as one quoted argument: single quotes, or double quotes with nothing the shell expands.
const QUOTED_ARGUMENT = /^[ \t]+(?:'([^']*)'|"([^"$`\\]*)")\s*$/;

/**
 * Recognises an apply_patch invocation the way Codex does, before anything is spawned:
 * - argv `['apply_patch' | 'applypatch', PATCH]`;
 * - a shell script (`bash|zsh|sh -c|-lc SCRIPT`, or the script string itself) that is exactly
 *   `apply_patch <<'EOF' … EOF` (any delimiter, quoted or not), optionally after `cd DIR &&`, or
 *   `apply_patch 'PATCH'`.
 * Returns the invocation, an `ApplyPatchError` when it is one but the patch is malformed (or a bare
 * patch was sent without `apply_patch`), or undefined for any other command, which then runs normally.
 */
export function parseApplyPatchInvocation(
  command: readonly string[] | string,
): ApplyPatchInvocation | ApplyPatchError | undefined {
  if (typeof command === 'string') return fromScript(command);
  const [first, second, third, ...rest] = command;
  if (first === undefined) return undefined;
  if (command.length === 2 && COMMAND_NAMES.has(first) && second !== undefined) return fromPatch(second);
  if (command.length === 1) return looksLikeBarePatch(first) ? implicitInvocation() : undefined;
  if (rest.length === 0 && third !== undefined && second !== undefined && isShell(first, second)) {
    return fromScript(third);
  }
  return undefined;
}

function fromScript(script: string): ApplyPatchInvocation | ApplyPatchError | undefined {
  if (looksLikeBarePatch(script)) return implicitInvocation();
  let rest = script.replace(/^\s+/, '');
  let workdir: string | undefined;
  const cd = CD_PREFIX.exec(rest);
  if (cd) {
    workdir = unquote(cd[1] ?? '');
    rest = rest.slice(cd[0].length);
  }
  const name = COMMAND.exec(rest);
  if (!name) return undefined;
  rest = rest.slice(name[0].length);

  const quoted = QUOTED_ARGUMENT.exec(rest);
  if (quoted) return fromPatch(quoted[1] ?? quoted[2] ?? '', workdir);

  const header = HEREDOC_HEADER.exec(rest);
  if (!header) return undefined;
  const stripTabs = header[1] === '-';
  const delimiter = header[2] ?? header[3] ?? header[4] ?? '';
  const lines = rest.slice(header[0].length).split('\n');
  const body: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    let line = (lines[index] ?? '').replace(/\r$/, '');
    if (stripTabs) line = line.replace(/^\t+/, '');
    if (line === delimiter) {
      // Strict: nothing may follow the heredoc (`&& echo done` is some other command).
      if (
        lines
          .slice(index + 1)
          .join('\n')
          .trim() !== ''
      )
        return undefined;
      return fromPatch(body.join('\n'), workdir);
    }
    body.push(line);
  }
  return undefined; // unterminated heredoc: leave it to the shell
}

function fromPatch(patch: string, workdir?: string): ApplyPatchInvocation | ApplyPatchError {
  try {
    const parsed = parsePatch(patch);
    return workdir === undefined ? { patch, parsed } : { patch, parsed, workdir };
  } catch (error) {
    if (ApplyPatchError.isInstance(error)) return error;
    throw error;
  }
}

function looksLikeBarePatch(text: string): boolean {
  if (!text.trimStart().startsWith('*** Begin Patch')) return false;
  try {
    parsePatch(text);
    return true;
  } catch {
    return false;
  }
}

function implicitInvocation(): ApplyPatchError {
  return new ApplyPatchError({
    reason: 'implicit_invocation',
    detail: 'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]',
  });
}

function isShell(program: string, flag: string): boolean {
  const name = (program.split(/[\\/]/).pop() ?? '').toLowerCase().replace(/\.exe$/, '');
  return SHELLS.has(name) && SHELL_FLAGS.has(flag);
}

function unquote(word: string): string {
  const quote = word[0];
  return (quote === "'" || quote === '"') && word.endsWith(quote) && word.length >= 2
    ? word.slice(1, -1)
    : word;
}
