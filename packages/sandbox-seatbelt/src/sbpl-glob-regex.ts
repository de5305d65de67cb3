import { globToRegExp } from '@ux/protocol-utils';

/** A deny-read glob cut into its literal directory prefix and the part only a regex can express. */
export interface GlobParts {
  /** Absolute directory with no glob characters (`/` at least). */
  base: string;
  /** The rest of the pattern, relative to `base`, never empty. */
  rest: string;
}

const GLOB_CHARACTERS = /[*?[\\]/;

/** Splits an absolute POSIX glob at its first segment holding a glob character (`/w/**\/*.env` → `/w`, `**\/*.env`). */
export function splitGlob(pattern: string): GlobParts {
  const segments = pattern.split('/');
  let first = 1;
  while (first < segments.length - 1 && !GLOB_CHARACTERS.test(segments[first]!)) first += 1;
  return { base: `/${segments.slice(1, first).join('/')}`, rest: segments.slice(first).join('/') };
}

/**
 * The SBPL regex for a glob below a base directory that is `baseDepth` components deep. The base itself
 * is matched by a `(subpath (param …))` next to this regex, so the regex only counts the base's components
 * (`/[^/]+` each) and never contains the path: paths stay out of the profile text. A match covers its
 * whole subtree, as a deny must. The glob semantics are `globToRegExp`'s from `@ux/protocol`; this only
 * rewrites its JavaScript syntax into the POSIX-style syntax Seatbelt reads. A character Seatbelt cannot
 * spell inside `#"…"` (a quote) becomes `[^/]`, which denies a little more, never less.
 */
export function sbplGlobRegex(rest: string, baseDepth: number): string {
  const source = globToRegExp(rest).source;
  const body = toSbplSyntax(source.slice(1, -1));
  return `^${'/[^/]+'.repeat(baseDepth)}/${body}(/.*)?$`;
}

const SPECIAL = '.*+?^$(){}|[]\\';

/** Rewrites the subset of JavaScript regex syntax `globToRegExp` produces (`RegExp.source` also escapes `/`). */
function toSbplSyntax(js: string): string {
  let out = '';
  let i = 0;
  while (i < js.length) {
    const char = js[i]!;
    if (char === '\\') {
      out += literal(js[i + 1]!);
      i += 2;
    } else if (js.startsWith('(?:', i)) {
      out += '(';
      i += 3;
    } else if (char === '[') {
      const end = classEnd(js, i);
      const body = js.slice(i + 1, end).replace(/\\\//g, '/');
      // Escapes mean something else inside a POSIX bracket expression; widen rather than guess.
      out += /[\\"[]/.test(body) ? '[^/]' : `[${body}]`;
      i = end + 1;
    } else {
      out += char === '"' ? '[^/]' : char;
      i += 1;
    }
  }
  return out;
}

function literal(char: string): string {
  if (char === '"') return '[^/]';
  return SPECIAL.includes(char) ? `\\${char}` : char;
}

function classEnd(js: string, start: number): number {
  let i = start + 1;
  while (i < js.length && js[i] !== ']') i += js[i] === '\\' ? 2 : 1;
  return i;
}
