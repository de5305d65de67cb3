/**
 * Whether a path is absolute on POSIX (`/x`) or Windows (`C:\x`, `C:/x`, `\\server\share`).
 * Policies travel between platforms (a Windows plan is built and tested on Linux), so this accepts both.
 */
export function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}
