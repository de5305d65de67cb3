import { proxyEnvironment } from '@ux/protocol-utils';

/** A variable the sandboxed shell may hand to an escalated program, and the values it may have. */
export interface PassThrough {
  /** The name, or a pattern of names. */
  name: string | RegExp;
  /** Values that pass; any other value is dropped (the session's value, if any, stays). */
  value: RegExp;
  why: string;
}

/** Words without `/`: no value here can name a file for the program to read. */
const WORD = /^[A-Za-z0-9_.@:+,=-]*$/;

/**
 * What an escalated program may take from the intercepted environment (everything else is the
 * session's): how to talk to the terminal it writes to and in which language, nothing that names a
 * file, a program or a directory. Each value is checked: a locale or `TERM` with a `/` would make the
 * C library or curses read a file the sandbox chose.
 */
export const ESCALATION_PASS_THROUGH: readonly PassThrough[] = [
  {
    name: 'TERM',
    value: WORD,
    why: 'the terminal type the output goes to (a name; terminfo files come from the system)',
  },
  { name: 'COLORTERM', value: WORD, why: 'whether that terminal shows 24-bit colour' },
  { name: 'COLUMNS', value: /^[0-9]{1,5}$/, why: 'the width of the output, for programs that format to it' },
  { name: 'LINES', value: /^[0-9]{1,5}$/, why: 'the height of the output' },
  {
    name: 'LANG',
    value: WORD,
    why: 'the language and encoding of messages and text (a locale name, never a path)',
  },
  { name: 'LANGUAGE', value: WORD, why: 'the order of message languages' },
  { name: /^LC_[A-Z]+$/, value: WORD, why: 'per-category locale (a locale name, never a path)' },
  {
    name: 'TZ',
    value: /^(?!:?\/)(?!.*\.\.)[A-Za-z0-9_+\-,.:/<>]*$/,
    why: 'how times are shown (a zone name or rule; an absolute or `..` path to a zone file is dropped)',
  },
  { name: 'NO_COLOR', value: /^.{0,16}$/s, why: 'turns colours off (a flag)' },
  { name: 'FORCE_COLOR', value: /^[A-Za-z0-9]{0,8}$/, why: 'turns colours on (a flag or level)' },
  { name: 'CLICOLOR', value: /^[0-9]{0,2}$/, why: 'BSD-style colour switch (a flag)' },
  { name: 'CLICOLOR_FORCE', value: /^[0-9]{0,2}$/, why: 'BSD-style colour switch (a flag)' },
];

/**
 * Variables the shell or ux set by themselves, not a choice of the sandboxed command: dropped without
 * a word in the receipt. `PATH` differs whenever login files ran (the session's always replaces it, as
 * before); shells fill in `LOGNAME`, `USER`, `HOSTNAME`, `MAIL` when absent; the proxy variables point at the sandbox's own bridge (nothing listens there outside);
 * `TMPDIR=/tmp` is what a sandbox with a private `/tmp` sets.
 */
const IMPLICIT = new Set([
  'PATH',
  'PWD',
  'OLDPWD',
  'SHLVL',
  '_',
  'LOGNAME',
  'USER',
  'USERNAME',
  'HOSTNAME',
  'MAIL',
  ...Object.keys(proxyEnvironment({ httpPort: 1, platform: 'linux' })),
]);

function implicit(name: string, value: string): boolean {
  return IMPLICIT.has(name) || name.startsWith('UX_') || (name === 'TMPDIR' && value === '/tmp');
}

function passes(name: string, value: string): boolean {
  return ESCALATION_PASS_THROUGH.some(
    (entry) =>
      (typeof entry.name === 'string' ? entry.name === name : entry.name.test(name)) &&
      entry.value.test(value),
  );
}

/**
 * The environment of an escalated exec: the one the door gave the command (`trusted`: the session's
 * starting environment after ux's environment policy, with ux's pinned values), never the sandboxed
 * shell's. `HOME`, `XDG_*`, `PATH`, every `GIT_*`, pagers, editors, loader and interpreter variables
 * are the session's whatever the shell set; only `ESCALATION_PASS_THROUGH` comes from the intercepted
 * environment, and `PWD` is the directory the program runs in (`cwd`). Returns the names the sandboxed
 * side set (or changed) that were not passed, for the receipt; ux's own and the shell's bookkeeping
 * variables are left out of that list.
 */
export function escalationEnvironment(
  intercepted: Readonly<Record<string, string>>,
  trusted: Readonly<Record<string, string>>,
  cwd?: string,
): { env: Record<string, string>; dropped: string[] } {
  const env: Record<string, string> = { ...trusted };
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(intercepted)) {
    if (trusted[name] === value) continue;
    if (passes(name, value)) env[name] = value;
    else if (!implicit(name, value)) dropped.push(name);
  }
  if (cwd !== undefined) env.PWD = cwd;
  else delete env.PWD;
  delete env.OLDPWD;
  return { env, dropped };
}
