/** `value` as one single-quoted POSIX shell word (`'` written as `'\''`); bytes pass unchanged. */
export function quotePosix(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
