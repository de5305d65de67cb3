/**
 * Variables that make a program load or run code of the caller's choosing before (or instead of) what
 * it was asked to do. An escalated exec runs outside the sandbox with the environment the sandboxed
 * shell built, so the sandboxed command could otherwise turn an allowed `git status` into anything:
 * `LD_PRELOAD=./evil.so`, `GIT_SSH_COMMAND=…`, `BASH_ENV=./x.sh`, `NODE_OPTIONS=--require ./x.js`.
 */
export const ESCALATION_UNSAFE_VARIABLES: readonly string[] = [
  'BASH_ENV',
  'ENV',
  'ZDOTDIR',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'IFS',
  'CDPATH',
  'GLOBIGNORE',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONINSPECT',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'PERL5DB',
  'RUBYOPT',
  'RUBYLIB',
  'NODE_OPTIONS',
  'NODE_PATH',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_EXEC_PATH',
  'GIT_ASKPASS',
  'GIT_EDITOR',
  'GIT_PAGER',
  'GIT_TEMPLATE_DIR',
  'GIT_PROXY_COMMAND',
  'SSH_ASKPASS',
  'EDITOR',
  'VISUAL',
  'LESSOPEN',
  'LESSCLOSE',
  'MANPAGER',
  'UX_SANDBOX',
  'UX_SANDBOX_NETWORK_DISABLED',
];

/** Prefixes of the same kind: the dynamic loaders' (glibc, musl, macOS) and git's config injection. */
export const ESCALATION_UNSAFE_PREFIXES: readonly string[] = ['LD_', 'DYLD_', 'GIT_CONFIG'];

/**
 * The environment of an escalated exec: the intercepted environment without the variables above, and
 * with the session's own `PATH` instead of one the sandboxed shell may have changed, so the program's
 * own lookups (`git` → `ssh`) do not land in a directory the sandboxed command wrote. `trusted` is
 * what the door itself gave the command: an unsafe name it set (`GIT_PAGER=cat`) keeps the door's
 * value. Returns the environment and the names dropped that the sandboxed side had set (for the
 * receipt; ux's own `UX_SANDBOX*` markers are left out of that list).
 */
export function escalationEnvironment(
  intercepted: Readonly<Record<string, string>>,
  trusted: Readonly<Record<string, string>>,
): { env: Record<string, string>; dropped: string[] } {
  const env: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(intercepted)) {
    const unsafe =
      ESCALATION_UNSAFE_VARIABLES.includes(name) ||
      ESCALATION_UNSAFE_PREFIXES.some((prefix) => name.startsWith(prefix));
    if (!unsafe) env[name] = value;
    else if (trusted[name] !== undefined) env[name] = trusted[name];
    else if (!name.startsWith('UX_SANDBOX')) dropped.push(name);
  }
  if (trusted.PATH !== undefined) env.PATH = trusted.PATH;
  else delete env.PATH;
  return { env, dropped };
}
