/**
 * Pure helpers that read apt's configuration (never write it): which Debian mirrors the system's
 * `deb` entries name, so zsh's source package can be downloaded straight from the same mirror.
 */

/** One apt sources file: its path and text. */
export interface AptSourcesFile {
  path: string;
  text: string;
}

/** A mirror the system installs packages from, as its `deb` entry names it. */
export interface DebianMirror {
  /** The archive root, without a trailing slash: `http://deb.debian.org/debian`. */
  uri: string;
  /** Suites in the order they are listed: `bookworm`, `bookworm-updates`. */
  suites: string[];
  components: string[];
  /** The keyring the entry trusts (`Signed-By`), when it names a file. */
  signedBy?: string;
}

/**
 * The enabled `deb` entries of these files (deb822 `.sources` or one-line `.list`), in order. Entries
 * without components (flat repositories) and `cdrom:`/`file:` ones are left out: they have no
 * `dists/<suite>/<component>/source/` index to read over HTTP.
 */
export function debianMirrors(files: readonly AptSourcesFile[]): DebianMirror[] {
  const mirrors: DebianMirror[] = [];
  const add = (uri: string, suites: string[], components: string[], signedBy: string | undefined) => {
    if (!/^https?:\/\//.test(uri) || components.length === 0 || suites.length === 0) return;
    mirrors.push({
      uri: uri.replace(/\/+$/, ''),
      suites,
      components,
      ...(signedBy?.startsWith('/') ? { signedBy } : {}),
    });
  };
  for (const file of files) {
    if (file.path.endsWith('.sources')) {
      for (const stanza of deb822Stanzas(file.text)) {
        if (!words(field(stanza, 'Types')).includes('deb') || field(stanza, 'Enabled') === 'no') continue;
        for (const uri of words(field(stanza, 'URIs')))
          add(
            uri,
            words(field(stanza, 'Suites')),
            words(field(stanza, 'Components')),
            field(stanza, 'Signed-By'),
          );
      }
    } else {
      for (const line of file.text.split('\n')) {
        const entry = /^[ \t]*deb[ \t]+(\[[^\]]*\][ \t]+)?(\S+)[ \t]+(\S+)[ \t]*(.*)$/.exec(line);
        if (!entry) continue;
        add(entry[2]!, [entry[3]!], words(entry[4]), parseOneLineOptions(entry[1])['signed-by']);
      }
    }
  }
  return mirrors;
}

/** Paragraphs of a deb822 file, each as its lines, comments left out. */
function deb822Stanzas(text: string): string[][] {
  return text
    .split(/\n[ \t]*\n/)
    .map((block) => block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#')))
    .filter((lines) => lines.length > 0);
}

function field(stanza: readonly string[], name: string): string | undefined {
  const prefix = `${name.toLowerCase()}:`;
  const line = stanza.find((candidate) => candidate.toLowerCase().startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

function words(value: string | undefined): string[] {
  return value?.split(/\s+/).filter((word) => word !== '') ?? [];
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
