import { SBPL_STRING_MAX_BYTES, utf8Length } from './sbpl-text.js';

/**
 * Letters that name the same file as an ASCII letter on a case-insensitive APFS volume although they are
 * not ASCII: U+212A KELVIN SIGN is canonically `K` (APFS compares names after normalization), and U+017F
 * LATIN SMALL LETTER LONG S case-folds to `s`. They are spelled as alternatives of that letter.
 */
const NON_ASCII_SPELLINGS: Readonly<Record<string, string>> = { k: '\u212a', s: '\u017f' };

/** Regex metacharacters that a one-character bracket class spells literally in POSIX and JavaScript syntax alike. */
const BRACKETED = '.*+?$(){}|[';
/** The metacharacters a bracket class cannot hold portably (`^` first negates, `]` closes, `\` differs). */
const BACKSLASHED = '^]\\';

const COMPONENT = '/[^/]+';

/**
 * The SBPL regex for one path below a base directory that is `baseDepth` components deep, matching every
 * letter-case spelling of it, as a case-insensitive volume (APFS and HFS+ by default) resolves them all
 * to the same file. The base itself is matched by a `(subpath (param …))` next to this regex, so the
 * regex only counts the base's components (`/[^/]+` each) and never spells the base path; only `relative`
 * (the part below the base, no leading `/`) enters the profile text, like the rest of a deny-read glob.
 *
 * - ASCII letters become bracket classes (`.git` → `[.][gG][iI][tT]`; `k` and `s` also take their non-ASCII
 *   twins, see `NON_ASCII_SPELLINGS`).
 * - Regex metacharacters are escaped; a quote or a control character, which an SBPL `#"…"` literal
 *   cannot hold, becomes `[^/]`.
 * - Non-ASCII text is compared after NFC normalization and each run of it becomes `[^/]+`: its other case
 *   and normalization spellings have no portable bracket form in a byte-wise regex engine.
 * - `subtree: true` anchors with `(/|$)` (the path and everything below it); `false` with `$` (a file).
 *
 * Every widening denies more, never less, for the exclusions and guards it is used for. When the result
 * would pass the 900-byte literal limit, the longest components are widened to `[^/]+` until it fits (the
 * caller still checks the result: a base deeper than ~140 components cannot fit at all).
 */
export function sbplPathRegex(relative: string, baseDepth: number, options: { subtree: boolean }): string {
  const components = relative === '' ? [] : relative.split('/');
  const pieces = components.map(componentRegex);
  const assemble = () =>
    `^${COMPONENT.repeat(baseDepth)}${pieces.map((piece) => `/${piece}`).join('')}${options.subtree ? '(/|$)' : '$'}`;
  let regex = assemble();
  while (utf8Length(regex) > SBPL_STRING_MAX_BYTES) {
    let longest = -1;
    for (const [index, piece] of pieces.entries()) {
      if (piece !== '[^/]+' && (longest === -1 || piece.length > pieces[longest]!.length)) longest = index;
    }
    if (longest === -1) break;
    pieces[longest] = '[^/]+';
    regex = assemble();
  }
  return regex;
}

function componentRegex(name: string): string {
  let out = '';
  let inNonAscii = false;
  for (const char of name.normalize('NFC')) {
    const code = char.codePointAt(0)!;
    if (code > 0x7f) {
      if (!inNonAscii) out += '[^/]+';
      inNonAscii = true;
      continue;
    }
    inNonAscii = false;
    const lower = char.toLowerCase();
    if (lower !== char.toUpperCase()) {
      const twin = NON_ASCII_SPELLINGS[lower];
      const bracket = `[${lower}${char.toUpperCase()}]`;
      out += twin === undefined ? bracket : `(${bracket}|${twin})`;
    } else if (code < 0x20 || code === 0x7f || char === '"') out += '[^/]';
    else if (BRACKETED.includes(char)) out += `[${char}]`;
    else if (BACKSLASHED.includes(char)) out += `\\${char}`;
    else out += char;
  }
  return out;
}
