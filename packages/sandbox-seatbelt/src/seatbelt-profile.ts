import { sbplParam, sbplRegex, sbplString } from './sbpl-text.js';
import {
  SEATBELT_BASE_POLICY,
  SEATBELT_NETWORK_POLICY,
  SEATBELT_PLATFORM_DEFAULTS_POLICY,
  SEATBELT_PTY_POLICY,
} from './seatbelt-base-policy.js';
import type { SeatbeltRules } from './seatbelt-rules.js';

export interface SeatbeltProfileOptions {
  /** The command gets a PTY: allow the terminal devices. */
  tty: boolean;
  /** Appended to every deny as `(with message …)`, so the violation collector can attribute log lines. */
  violationTag?: string;
}

/** A profile and the `-D` parameters it reads, in order. */
export interface SeatbeltProfile {
  text: string;
  parameters: [name: string, value: string][];
}

/**
 * Renders the SBPL profile: `(deny default)`, the base rules, the terminal, reads, writes, move guards,
 * ux's hidden directories, the private temporary directory, deny-read globs, the host paths, network
 * (IP and the listed unix sockets with the network on; the proxy's loopback port and the listed unix
 * sockets when proxied; only the listed unix sockets when restricted). Later rules win, so the hidden
 * directories beat every allow before them, and the host paths stay readable whatever hides them. Every
 * request path that a filter matches whole, and the proxy's address, is a `(param "…")`; its value
 * travels as `-D NAME=value`. The one place part of a path enters the text is below a parameter: the part
 * of an excluded path or a move guard below its writable root, and the rest of a deny-read glob below its
 * base, as an escaped SBPL regex (`sbplPathRegex`, `sbplGlobRegex`) that can hold no quote.
 */
export function renderSeatbeltProfile(
  rules: SeatbeltRules,
  options: SeatbeltProfileOptions,
): SeatbeltProfile {
  const parameters: [string, string][] = [];
  const param = (name: string, value: string) => {
    parameters.push([name, value]);
    return sbplParam(name);
  };
  const tag = options.violationTag === undefined ? '' : ` (with message ${sbplString(options.violationTag)})`;
  const lines: string[] = ['(version 1)', `(deny default${tag})`, '', SEATBELT_BASE_POLICY];

  if (options.tty) lines.push('', '; terminal (the command has a PTY)', SEATBELT_PTY_POLICY);

  lines.push('', '; reads');
  if (rules.restrictedReads) {
    lines.push(
      '; realpath() and getcwd() stat every parent directory; stat reveals no contents',
      '(allow file-read-metadata (vnode-type DIRECTORY))',
      '; dyld aborts before exec when it cannot read /',
      '(allow file-read* (literal "/"))',
    );
    if (rules.platformDefaults)
      lines.push('; platform defaults (minimal)', SEATBELT_PLATFORM_DEFAULTS_POLICY);
  }
  let readable = 0;
  let unreadable = 0;
  for (const rule of rules.reads) {
    if (rule.access === 'allow' && rule.path === '/' && !rules.restrictedReads) {
      lines.push('(allow file-read*)');
    } else if (rule.access === 'allow') {
      lines.push(`(allow file-read* (subpath ${param(`READABLE_ROOT_${readable++}`, rule.path)}))`);
    } else {
      lines.push(`(deny file-read* (subpath ${param(`UNREADABLE_${unreadable++}`, rule.path)})${tag})`);
    }
  }

  lines.push('', '; writes');
  // Each writable root is one parameter, shared by its write rule and its move guards.
  const rootParams =
    rules.fileSystem === 'restricted'
      ? rules.writableRoots.map(({ root }, i) => param(`WRITABLE_ROOT_${i}`, root))
      : [];
  if (rules.fileSystem === 'unrestricted') lines.push('(allow file-write*)');
  else if (rules.writableRoots.length === 0)
    lines.push(rules.privateTmp === undefined ? '; nothing is writable' : '; no writable root');
  else {
    if (rules.writableRoots.some(({ excluded }) => excluded.length > 0)) {
      lines.push(
        '; protected and deny-read paths stay unwritable in every letter case (macOS volumes are',
        '; case-insensitive by default): the root parameter plus a regex of the spellings below it;',
        '; k and s also match U+212A KELVIN SIGN and U+017F LATIN SMALL LETTER LONG S',
      );
    }
    lines.push(...rules.writableRoots.flatMap((root, i) => writeRule(root, rootParams[i]!)));
  }

  if (rules.moveGuards.length > 0) {
    lines.push(
      '; renaming or replacing a parent of a protected or deny-read path would move it out of its rule;',
      '; each guard is the root parameter plus a regex of every letter-case spelling below it',
      '(deny file-write-unlink file-write-create',
    );
    rules.writableRoots.forEach(({ root }, i) => {
      const guards = rules.moveGuards.filter((guard) => guard.root === root);
      if (guards.length === 0) return;
      lines.push(
        `  (require-all (subpath ${rootParams[i]!})`,
        '    (require-any',
        ...guards.map((guard) => `      (regex ${sbplRegex(guard.regex)})`),
      );
      lines[lines.length - 1] += '))';
    });
    lines[lines.length - 1] += `${tag})`;
  }

  if (rules.hidden.length > 0) {
    lines.push(
      '',
      "; ux's own directories (runtime files, quarantine): no reads and no writes, whatever allowed them above",
    );
    rules.hidden.forEach((path, i) => {
      lines.push(`(deny file-read* file-write* (subpath ${param(`HIDDEN_${i}`, path)})${tag})`);
    });
  }

  if (rules.privateTmp !== undefined) {
    lines.push(
      '',
      "; the session's private temporary directory (TMPDIR) in place of the host's /tmp and $TMPDIR",
      `(allow file-read* file-write* (subpath ${param('PRIVATE_TMP', rules.privateTmp)}))`,
    );
  }
  if (rules.metadataPaths.length > 0) {
    lines.push(
      '; realpath() and getcwd() stat the parents that a hidden directory holds; stat reveals no contents',
    );
    rules.metadataPaths.forEach((path, i) => {
      lines.push(`(allow file-read-metadata (literal ${param(`PARENT_${i}`, path)}))`);
    });
  }

  if (rules.deniedGlobs.length > 0) {
    lines.push('', '; deny-read globs: no reads, and no writes or renames that could expose them');
    rules.deniedGlobs.forEach((glob, i) => {
      lines.push(
        `(deny file-read* file-write* (require-all (subpath ${param(`DENY_GLOB_${i}_BASE`, glob.base)}) (regex ${sbplRegex(glob.regex)}))${tag})`,
      );
    });
  }

  if (rules.hostPaths.length > 0) {
    lines.push(
      '',
      "; what the launch itself reads (the shell, its snapshot, ux's PATH directories): readable whatever",
      '; the rules above hide, never writable',
    );
    rules.hostPaths.forEach(({ path, subtree }, i) => {
      lines.push(`(allow file-read* (${subtree ? 'subpath' : 'literal'} ${param(`HOST_PATH_${i}`, path)}))`);
    });
  }

  lines.push('', '; network');
  if (rules.network === 'enabled') lines.push(SEATBELT_NETWORK_POLICY);
  else if (rules.network === 'proxied') {
    if (rules.proxyLoopbackPort === undefined) {
      throw new Error("a proxied network needs the proxy's loopback port (networkProxy.loopbackPort)");
    }
    lines.push(
      "; proxied: TCP to the host's proxy on its loopback port and nothing else, no DNS (the proxy resolves)",
      `(allow network-outbound (remote tcp ${param('PROXY_LOOPBACK_ADDRESS', `localhost:${rules.proxyLoopbackPort}`)}))`,
    );
  } else if (rules.unixSockets.length === 0) {
    lines.push('; restricted: nothing is allowed, so the default deny holds');
  } else lines.push('; restricted: no network, only the unix sockets below');

  if (rules.unixSockets.length > 0) {
    lines.push('; unix sockets the policy lists: connect only; every other unix socket stays unreachable');
    // With the network on, the section above already lets sockets of any domain be created.
    if (rules.network !== 'enabled') lines.push('(allow system-socket (socket-domain AF_UNIX))');
    rules.unixSockets.forEach((path, i) => {
      lines.push(
        `(allow network-outbound (remote unix-socket (path-literal ${param(`UNIX_SOCKET_PATH_${i}`, path)})))`,
      );
    });
  }

  return { text: `${lines.join('\n')}\n`, parameters };
}

function writeRule({ excluded }: SeatbeltRules['writableRoots'][number], rootParam: string): string[] {
  if (excluded.length === 0) return [`(allow file-write* (subpath ${rootParam}))`];
  const lines = ['(allow file-write*', `  (require-all (subpath ${rootParam})`];
  // A `(/|$)` regex also blocks creating the excluded path itself (mkdir .git) and anything below it.
  for (const { regex } of excluded) lines.push(`    (require-not (regex ${sbplRegex(regex)}))`);
  lines[lines.length - 1] += '))';
  return lines;
}
