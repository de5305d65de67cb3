import { fileURLToPath } from 'node:url';
import type { InvalidArgumentsError } from '@ux/protocol/core';
import { invalidWireValue } from '@ux/protocol/core';

/**
 * The `file://` URI the exec-server wire carries for an absolute path (`cwd`, `workspaceRoots`, `fs/*`
 * paths). Built by hand rather than with `pathToFileURL`, which would resolve the path against this
 * machine's working directory and conventions: the path may name a place on another host. Every
 * segment is percent-encoded (spaces, `%`, `#`, `?`, non-ASCII); a Windows drive path
 * (`C:\Users\me`) becomes `file:///C:/Users/me`.
 */
export function fileUriFromPath(path: string): string {
  if (/^[A-Za-z]:[\\/]/.test(path)) {
    const [drive, ...rest] = path.split(/[\\/]/);
    return `file:///${drive}/${rest.map(encodeURIComponent).join('/')}`;
  }
  return `file://${path.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The absolute path a `file://` URI names, in this host's conventions (the reading side of
 * `fileUriFromPath`). Anything else is an `InvalidArgumentsError` whose one issue is addressed by
 * `field` and whose message is the whole sentence the exec-server answers with (-32602), e.g.
 * `invalid URI in cwd: "/tmp" is not a URI; send a file:// URI`.
 */
export function pathFromFileUri(uri: string, field = 'path'): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidUri(field, `${JSON.stringify(uri)} is not a URI; send a file:// URI`);
  }
  if (url.protocol !== 'file:') throw invalidUri(field, `${JSON.stringify(uri)} is not a file:// URI`);
  try {
    return fileURLToPath(url);
  } catch (error) {
    throw invalidUri(field, (error as Error).message);
  }
}

function invalidUri(field: string, reason: string): InvalidArgumentsError {
  return invalidWireValue(field, `invalid URI in ${field}: ${reason}`);
}
