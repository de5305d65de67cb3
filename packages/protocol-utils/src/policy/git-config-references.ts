import { posix } from 'node:path';

/** A file or directory a git configuration makes git read as configuration or run as a program. */
export interface GitConfigReference {
  path: string;
  why: string;
}

/**
 * Keys whose value is a program (a shell command line) git runs, or a file it reads as configuration.
 * A value that names a path inside a writable root hands that path the power of the (protected)
 * configuration itself: `core.hooksPath = .husky/_`, `include.path = ../shared.gitconfig`,
 * `core.fsmonitor = ./tools/watch.sh`.
 */
const PROGRAM_KEYS = [
  /^core\.(fsmonitor|pager|editor|sshcommand|askpass)$/,
  /^(diff|merge|filter)\.[^.]+\.[^.]+$/,
  /^(diff|merge)\.(tool|external)$/,
  /^(credential|credential\..+)\.helper$/,
  /^gpg(\.[^.]+)?\.program$/,
  /^sequence\.editor$/,
  /^alias\..+$/,
  /^(difftool|mergetool)\.[^.]+\.(cmd|path)$/,
  /^pager\..+$/,
  /^uploadpack\.packobjectshook$/,
];

/**
 * What a repository's configuration text points git at, resolved to absolute paths: the hooks
 * directory `core.hooksPath` names (and, for husky's `X/_`, `X` itself, whose files its hooks run),
 * every `include.path` / `includeIf.*.path` file, and every path-like word of a program git runs
 * (`./tools/x.sh`, `scripts/pager`), relative to the work tree. Words without a slash are programs
 * found on PATH, which are not the repository's. Unparseable lines are skipped: this only adds
 * protection.
 */
export function gitConfigReferences(
  text: string,
  where: { gitDir: string; workTree?: string; homeDir?: string },
): GitConfigReference[] {
  const found: GitConfigReference[] = [];
  const base = where.workTree ?? posix.dirname(where.gitDir);
  const absolute = (value: string, relativeTo: string) => {
    if (value.startsWith('~/') && where.homeDir) return posix.join(where.homeDir, value.slice(2));
    return posix.resolve(relativeTo, value);
  };
  for (const { key, value } of parseGitConfig(text)) {
    if (key === 'core.hookspath') {
      const dir = absolute(value, base);
      found.push({ path: dir, why: 'the hooks directory core.hooksPath names: programs git runs' });
      if (posix.basename(dir) === '_' && posix.basename(posix.dirname(dir)) === '.husky')
        found.push({ path: posix.dirname(dir), why: "husky's hooks: programs its hooks directory runs" });
    } else if (key === 'include.path' || (key.startsWith('includeif.') && key.endsWith('.path'))) {
      found.push({
        path: absolute(value, where.gitDir),
        why: 'a file git reads as its configuration (include.path)',
      });
    } else if (PROGRAM_KEYS.some((pattern) => pattern.test(key))) {
      for (const word of commandWords(value)) {
        if (!word.includes('/') || word.startsWith('-') || /^[a-z][a-z0-9+.-]*:/i.test(word)) continue;
        found.push({ path: absolute(word, base), why: `a program git runs (${key})` });
      }
    }
  }
  return found;
}

/** `section.subsection.key = value` pairs of a git config file; keys lowercased except subsections. */
export function parseGitConfig(text: string): { key: string; value: string }[] {
  const pairs: { key: string; value: string }[] = [];
  let section = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header) {
      const name = header[1]!.toLowerCase();
      section = header[2] === undefined ? name : `${name}.${header[2].replace(/\\(.)/g, '$1')}`;
      const rest = header[3]!.trim();
      if (rest === '' || rest.startsWith('#') || rest.startsWith(';')) continue;
      pairs.push(...parseGitConfig(`[${section}]\n${rest}`).filter((pair) => pair.key.startsWith(section)));
      continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!entry || section === '') continue;
    pairs.push({ key: `${section}.${entry[1]!.toLowerCase()}`, value: unquote(entry[2] ?? 'true') });
  }
  return pairs;
}

/** A git config value without its quotes, escapes and trailing comment. */
function unquote(value: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (char === '"') quoted = !quoted;
    else if (char === '\\' && i + 1 < value.length) {
      const next = value[++i]!;
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
    } else if (!quoted && (char === '#' || char === ';')) break;
    else out += char;
  }
  return out.trim();
}

/** The words of a shell command line, roughly (quotes removed; `!` of an alias dropped). */
function commandWords(value: string): string[] {
  const words: string[] = [];
  const text = value.startsWith('!') ? value.slice(1) : value;
  for (const match of text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s;&|()<>`$"']+)/g))
    words.push(match[1] ?? match[2] ?? match[3] ?? '');
  return words.filter((word) => word !== '');
}
