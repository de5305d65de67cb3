/**
 * A `file://` URI for a path on the exec-server's host. Built by hand rather than with `pathToFileURL`,
 * which would resolve it against this machine's working directory and conventions.
 */
export function remoteFileUri(path: string): string {
  return `file://${path.split('/').map(encodeURIComponent).join('/')}`;
}
