import { describe, expect, it } from 'vitest';
import { debSrcEntriesFor, hasDebSrcEntry } from './debian-source-entries.js';

// Debian 12's container image, as shipped.
const DEBIAN_SOURCES = {
  path: '/etc/apt/sources.list.d/debian.sources',
  text: `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`,
};

describe('hasDebSrcEntry', () => {
  it('sees none in the stock Debian image', () => {
    expect(hasDebSrcEntry([DEBIAN_SOURCES])).toBe(false);
  });

  it('sees one in deb822 and in one-line format, but not a disabled or commented one', () => {
    expect(
      hasDebSrcEntry([{ path: '/x.sources', text: 'Types: deb deb-src\nURIs: http://a\nSuites: s\n' }]),
    ).toBe(true);
    expect(
      hasDebSrcEntry([{ path: '/etc/apt/sources.list', text: 'deb-src http://a bookworm main\n' }]),
    ).toBe(true);
    expect(
      hasDebSrcEntry([
        { path: '/x.sources', text: 'Types: deb-src\nURIs: http://a\nSuites: s\nEnabled: no\n' },
      ]),
    ).toBe(false);
    expect(
      hasDebSrcEntry([{ path: '/etc/apt/sources.list', text: '# deb-src http://a bookworm main\n' }]),
    ).toBe(false);
  });
});

describe('debSrcEntriesFor', () => {
  it('mirrors every deb stanza as deb-src, keeping URIs, suites, components and the key', () => {
    const text = debSrcEntriesFor([DEBIAN_SOURCES])!;
    const stanzas = text
      .split('\n\n')
      .map((stanza) => stanza.split('\n').filter((line) => !line.startsWith('#') && line !== ''));
    expect(stanzas).toEqual([
      [
        'Types: deb-src',
        'URIs: http://deb.debian.org/debian',
        'Suites: bookworm bookworm-updates',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
      ],
      [
        'Types: deb-src',
        'URIs: http://deb.debian.org/debian-security',
        'Suites: bookworm-security',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
      ],
    ]);
    expect(hasDebSrcEntry([{ path: '/etc/apt/sources.list.d/ux.sources', text }])).toBe(true);
  });

  it('converts one-line entries, with their signed-by option', () => {
    const text = debSrcEntriesFor([
      {
        path: '/etc/apt/sources.list',
        text: 'deb [arch=amd64 signed-by=/k.gpg] http://deb.debian.org/debian bookworm main contrib\n# deb http://x y z\n',
      },
    ]);
    expect(text).toContain(
      'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main contrib\nSigned-By: /k.gpg',
    );
    expect(text).not.toContain('http://x');
  });

  it('gives nothing when there is no deb entry to mirror', () => {
    expect(debSrcEntriesFor([{ path: '/etc/apt/sources.list', text: '# empty\n' }])).toBeUndefined();
  });
});
