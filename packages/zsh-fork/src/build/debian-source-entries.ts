/**
 * Pure helpers for apt's source lists: does any entry already fetch source packages (`deb-src`), and
 * the `deb-src` twin of the binary entries, so `apt-get source zsh` can work on a Debian machine that
 * only lists `deb` (every Debian container image).
 */

/** One apt sources file: its path and text. */
export interface AptSourcesFile {
  path: string;
  text: string;
}

/** Whether any enabled entry in these files is a `deb-src` one (one-line or deb822 format). */
export function hasDebSrcEntry(files: readonly AptSourcesFile[]): boolean {
  for (const file of files) {
    if (file.path.endsWith('.sources')) {
      for (const stanza of deb822Stanzas(file.text))
        if (field(stanza, 'Types')?.split(/\s+/).includes('deb-src') && field(stanza, 'Enabled') !== 'no')
          return true;
    } else if (/^[ \t]*deb-src[ \t]/m.test(file.text)) return true;
  }
  return false;
}

/**
 * `deb-src` entries mirroring the `deb` ones of these files, as one deb822 `.sources` text (URIs,
 * suites, components and `Signed-By` kept), or undefined when there is no `deb` entry to mirror.
 */
export function debSrcEntriesFor(files: readonly AptSourcesFile[]): string | undefined {
  const stanzas: string[] = [];
  for (const file of files) {
    if (file.path.endsWith('.sources')) {
      for (const stanza of deb822Stanzas(file.text)) {
        if (!field(stanza, 'Types')?.split(/\s+/).includes('deb') || field(stanza, 'Enabled') === 'no')
          continue;
        const kept = stanza
          .filter((line) => !line.startsWith('#'))
          .map((line) => (/^Types:/i.test(line) ? 'Types: deb-src' : line));
        stanzas.push(kept.join('\n'));
      }
    } else {
      for (const line of file.text.split('\n')) {
        const entry = /^[ \t]*deb[ \t]+(\[[^\]]*\][ \t]+)?(\S+)[ \t]+(\S+)[ \t]*(.*)$/.exec(line);
        if (!entry) continue;
        const options = parseOneLineOptions(entry[1]);
        const lines = ['Types: deb-src', `URIs: ${entry[2]}`, `Suites: ${entry[3]}`];
        if (entry[4]?.trim()) lines.push(`Components: ${entry[4].trim().replace(/\s+/g, ' ')}`);
        if (options['signed-by']) lines.push(`Signed-By: ${options['signed-by']}`);
        stanzas.push(lines.join('\n'));
      }
    }
  }
  if (stanzas.length === 0) return undefined;
  return `# Added by ux zsh-fork build so that \`apt-get source zsh\` works; safe to remove.\n${stanzas.join('\n\n')}\n`;
}

/** Paragraphs of a deb822 file, each as its lines (continuation lines kept). */
function deb822Stanzas(text: string): string[][] {
  return text
    .split(/\n[ \t]*\n/)
    .map((block) => block.split('\n').filter((line) => line.trim() !== ''))
    .filter((lines) => lines.some((line) => !line.startsWith('#')));
}

function field(stanza: readonly string[], name: string): string | undefined {
  const prefix = `${name.toLowerCase()}:`;
  const line = stanza.find((candidate) => candidate.toLowerCase().startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

function parseOneLineOptions(bracketed: string | undefined): Record<string, string> {
  const options: Record<string, string> = {};
  if (!bracketed) return options;
  for (const option of bracketed
    .replace(/^\[|\][ \t]*$/g, '')
    .trim()
    .split(/\s+/)) {
    const [key, value] = option.split('=');
    if (key && value) options[key.toLowerCase()] = value;
  }
  return options;
}
