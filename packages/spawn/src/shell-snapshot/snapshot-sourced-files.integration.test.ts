import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { snapshotSourcedFiles, sourcedBy } from './snapshot-sourced-files.js';

describe('sourcedBy', () => {
  it('finds literal paths after . and source, with ~ and $HOME, after && and then', () => {
    const text = [
      '. ~/.bash_aliases',
      'source "$HOME/.config/sh/env"',
      '[ -f /etc/bash_completion ] && . /etc/bash_completion',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text
      'if [ -r ${HOME}/.local.sh ]; then . ${HOME}/.local.sh; fi',
      "  source '/opt/tool/init.sh' # trailing",
      '# . /commented/out',
      '. "$NVM_DIR/nvm.sh"',
      'for f in ~/.rc.d/*; do . "$f"; done',
      '. relative/file',
    ].join('\n');
    expect(sourcedBy(text, '/h')).toEqual([
      '/h/.bash_aliases',
      '/h/.config/sh/env',
      '/etc/bash_completion',
      '/h/.local.sh',
      '/opt/tool/init.sh',
    ]);
  });
});

describe('snapshotSourcedFiles', () => {
  it('follows sources of sources, once each, and does not hang on a FIFO', () => {
    const home = tempDir('ux-sourced-');
    mkdirSync(join(home, 'd'));
    writeFileSync(join(home, '.bashrc'), `. ~/d/one\n. ~/fifo\n`);
    writeFileSync(join(home, 'd/one'), `. ~/d/two\n. ~/.bashrc\n`);
    writeFileSync(join(home, 'd/two'), `. ~/d/missing\n`);
    execFileSync('mkfifo', [join(home, 'fifo')]);
    expect(snapshotSourcedFiles([join(home, '.bashrc')], home)).toEqual(
      [join(home, 'd/missing'), join(home, 'd/one'), join(home, 'd/two'), join(home, 'fifo')].sort(),
    );
  });
});
