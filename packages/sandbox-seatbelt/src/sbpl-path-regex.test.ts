import { describe, expect, it } from 'vitest';
import { sbplPathRegex } from './sbpl-path-regex.js';
import { SBPL_STRING_MAX_BYTES, utf8Length } from './sbpl-text.js';

/** SBPL's regex syntax as ux writes it is also JavaScript syntax; a byte-wise engine reads it the same for ASCII. */
const matches = (regex: string, path: string) => new RegExp(regex).test(path);

/** A deterministic pseudo-random generator, so a failure names a reproducible spelling. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Another spelling of the same name on a case-insensitive APFS volume. */
function respell(text: string, next: () => number): string {
  return [...text]
    .map((char) => {
      const roll = next();
      if (char.toLowerCase() === 'k' && roll < 0.2) return '\u212a';
      if (char.toLowerCase() === 's' && roll < 0.2) return '\u017f';
      return roll < 0.5 ? char.toUpperCase() : char.toLowerCase();
    })
    .join('');
}

describe('sbplPathRegex', () => {
  it('counts the base components and spells every letter as a bracket class', () => {
    expect(sbplPathRegex('.git/config', 3, { subtree: false })).toBe(
      '^/[^/]+/[^/]+/[^/]+/[.][gG][iI][tT]/[cC][oO][nN][fF][iI][gG]$',
    );
    expect(sbplPathRegex('.codex', 2, { subtree: true })).toBe('^/[^/]+/[^/]+/[.][cC][oO][dD][eE][xX](/|$)');
    expect(sbplPathRegex('.git/hooks', 0, { subtree: true })).toBe(
      '^/[.][gG][iI][tT]/[hH][oO][oO]([kK]|\u212a)([sS]|\u017f)(/|$)',
    );
    // The base itself (a guard on a writable root).
    expect(sbplPathRegex('', 2, { subtree: false })).toBe('^/[^/]+/[^/]+$');
  });

  it('escapes every metacharacter and widens a quote or control character to one non-slash character', () => {
    const name = 'a.b*c+d?e$f(g)h{i}j|k[l]m^n\\o';
    const regex = sbplPathRegex(name, 1, { subtree: false });
    expect(regex).toBe(
      '^/[^/]+/[aA][.][bB][*][cC][+][dD][?][eE][$][fF][(][gG][)][hH][{][iI][}][jJ][|]([kK]|\u212a)[[][lL]\\][mM]\\^[nN]\\\\[oO]$',
    );
    expect(matches(regex, `/w/${name}`)).toBe(true);
    expect(matches(regex, `/w/${name.toUpperCase()}`)).toBe(true);
    // A metacharacter matches only itself.
    expect(matches(regex, `/w/${name.replace('.', 'x')}`)).toBe(false);
    expect(matches(regex, `/w/${name.replace('*', '')}`)).toBe(false);

    const quoted = sbplPathRegex('say "hi"\u0007', 0, { subtree: true });
    expect(quoted).toBe('^/([sS]|\u017f)[aA][yY] [^/][hH][iI][^/][^/](/|$)');
    expect(quoted).not.toMatch(/["\u0000-\u001f]/);
    expect(matches(quoted, '/SAY "HI"\u0007')).toBe(true);
  });

  it('matches every case spelling of the path, and nothing beside it', () => {
    const next = random(7);
    const cases: [string, boolean][] = [
      ['.git/config', false],
      ['.git/hooks', true],
      ['.git/commondir', true],
      ['.codex', true],
      ['.git/modules/libs/json-schema/config.worktree', true],
      ['.git/worktrees/feature_2/gitdir', false],
      ['.config/fish/config.fish', false],
      ['Secrets (old)/keys+1', true],
    ];
    for (const [relative, subtree] of cases) {
      const regex = sbplPathRegex(relative, 3, { subtree });
      for (let i = 0; i < 40; i += 1) {
        const spelled = `/Users/me/w/${respell(relative, next)}`;
        expect(matches(regex, spelled), `${regex} vs ${spelled}`).toBe(true);
        expect(matches(regex, `${spelled}/below`), `${regex} vs ${spelled}/below`).toBe(subtree);
      }
      const wrong = [
        `/Users/me/w/${relative}x`,
        `/Users/me/w/${relative.slice(0, -1)}`,
        `/Users/me/w/x${relative}`,
        `/Users/me/w/sub/${relative}`,
        `/Users/me/${relative}`,
        `/Users/me/w/${relative.replace(/[a-z]/, (letter) => (letter === 'z' ? 'a' : String.fromCharCode(letter.charCodeAt(0) + 1)))}`,
      ];
      for (const path of wrong) expect(matches(regex, path), `${regex} vs ${path}`).toBe(false);
    }
  });

  it('covers other case and normalization spellings of non-ASCII text by widening it to [^/]+', () => {
    const regex = sbplPathRegex('Ωmega/café', 2, { subtree: true });
    expect(regex).toBe('^/[^/]+/[^/]+/[^/]+[mM][eE][gG][aA]/[cC][aA][fF][^/]+(/|$)');
    for (const spelled of ['Ωmega/café', 'ωMEGA/CAFÉ', 'Ωmega/cafe\u0301', 'ωmega/CAFE\u0301/x']) {
      expect(matches(regex, `/a/b/${spelled}`), spelled).toBe(true);
    }
    // Given decomposed (as HFS+ stores names), the text is composed first: the precomposed spelling matches too.
    expect(matches(sbplPathRegex('cafe\u0301', 0, { subtree: false }), '/CAFÉ')).toBe(true);
    // Widening denies a little more (any non-slash text stands for the accent), never less.
    expect(matches(regex, '/a/b/Ωmega/cafe')).toBe(true);
    expect(matches(regex, '/a/b/mega/café')).toBe(false);
    expect(matches(regex, '/a/b/Ωmega/caf')).toBe(false);
  });

  it('widens the longest components until the regex fits the 900-byte literal limit', () => {
    const long = 'n'.repeat(250);
    const regex = sbplPathRegex(`.git/modules/${long}/hooks`, 4, { subtree: true });
    expect(utf8Length(regex)).toBeLessThanOrEqual(SBPL_STRING_MAX_BYTES);
    expect(regex).toBe(
      '^/[^/]+/[^/]+/[^/]+/[^/]+/[.][gG][iI][tT]/[mM][oO][dD][uU][lL][eE]([sS]|\u017f)/[^/]+/[hH][oO][oO]([kK]|\u212a)([sS]|\u017f)(/|$)',
    );
    expect(matches(regex, `/a/b/c/d/.GIT/modules/${long.toUpperCase()}/hooks/pre-commit`)).toBe(true);
    // A base too deep to fit is returned as is; the caller refuses it.
    expect(utf8Length(sbplPathRegex('x', 200, { subtree: true }))).toBeGreaterThan(SBPL_STRING_MAX_BYTES);
  });
});
