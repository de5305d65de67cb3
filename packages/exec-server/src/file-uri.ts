import { fileURLToPath, pathToFileURL } from 'node:url';
import { invalidParams } from './rpc-error.js';

/** The absolute path a `file://` URI names; anything else is a -32602 error (paths travel as URIs). */
export function pathFromFileUri(uri: string, field = 'path'): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw invalidParams(`invalid URI in ${field}: ${JSON.stringify(uri)} is not a URI; send a file:// URI`);
  }
  if (url.protocol !== 'file:') {
    throw invalidParams(`invalid URI in ${field}: ${JSON.stringify(uri)} is not a file:// URI`);
  }
  try {
    return fileURLToPath(url);
  } catch (error) {
    throw invalidParams(`invalid URI in ${field}: ${(error as Error).message}`);
  }
}

export function fileUriFromPath(path: string): string {
  return pathToFileURL(path).href;
}
