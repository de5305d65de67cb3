import { describe, expect, it } from 'vitest';
import { debianMirrors } from './debian-mirrors.js';

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

describe('debianMirrors', () => {
  it("reads the stock image's deb822 entries in order, with their keyring", () => {
    expect(debianMirrors([DEBIAN_SOURCES])).toEqual([
      {
        uri: 'http://deb.debian.org/debian',
        suites: ['bookworm', 'bookworm-updates'],
        components: ['main'],
        signedBy: '/usr/share/keyrings/debian-archive-keyring.gpg',
      },
      {
        uri: 'http://deb.debian.org/debian-security',
        suites: ['bookworm-security'],
        components: ['main'],
        signedBy: '/usr/share/keyrings/debian-archive-keyring.gpg',
      },
    ]);
  });

  it('reads one-line entries with options, and leaves out deb-src, disabled, commented and flat ones', () => {
    expect(
      debianMirrors([
        {
          path: '/etc/apt/sources.list',
          text: [
            '# deb http://commented.example/debian bookworm main',
            'deb-src http://src.example/debian bookworm main',
            'deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian/ bookworm main contrib',
            'deb http://flat.example/repo ./',
            'deb cdrom:[Debian]/ bookworm main',
          ].join('\n'),
        },
        {
          path: '/x.sources',
          text: 'Types: deb\nURIs: http://off.example\nSuites: s\nComponents: main\nEnabled: no\n',
        },
      ]),
    ).toEqual([
      {
        uri: 'https://mirror.example/debian',
        suites: ['bookworm'],
        components: ['main', 'contrib'],
        signedBy: '/k.gpg',
      },
    ]);
  });
});
