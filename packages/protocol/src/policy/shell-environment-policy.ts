/**
 * Which of a host's variables a command starts from (config `[shell_environment_policy]`, the
 * exec-server's `envPolicy`). `exclude` and `includeOnly` are globs (`AWS_*`) matched without regard
 * to case; the `core` names match exactly.
 */
export interface ShellEnvironmentPolicy {
  /** `all` (default), `core` (HOME, LOGNAME, PATH, SHELL, USER, USERNAME, TMPDIR, TEMP, TMP), or `none`. */
  inherit?: 'all' | 'core' | 'none';
  /** Keep names containing KEY, SECRET or TOKEN (dropped by default). */
  ignoreDefaultExcludes?: boolean;
  /** Drop these names. */
  exclude?: readonly string[];
  /** Set these, after the filters above; they override inherited values. */
  set?: Readonly<Record<string, string>>;
  /** When non-empty, keep only these names, `set` ones included. Empty (or absent) filters nothing. */
  includeOnly?: readonly string[];
}
