import { InvalidArgumentsError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { fileUriFromPath, pathFromFileUri } from './file-uri.js';

describe('fileUriFromPath / pathFromFileUri', () => {
  it.each([
    '/',
    '/tmp',
    '/work/my proj/file.txt',
    '/work/100%/%20 literally',
    '/work/a#b?c&d=e;f',
    '/work/Zürich/日本語/🙂',
    "/work/it's (1) [x] {y} !*+,@$",
    '/work/back\\slash',
    '/work/trailing/',
    '/work/new\nline',
  ])('%j survives the round trip', (path) => {
    const uri = fileUriFromPath(path);
    expect(uri.startsWith('file:///')).toBe(true);
    // A standard parser reads the same path: no host, nothing taken as query or fragment.
    const url = new URL(uri);
    expect(url.host).toBe('');
    expect(url.search).toBe('');
    expect(url.hash).toBe('');
    expect(pathFromFileUri(uri)).toBe(path);
  });

  it('percent-encodes by hand, never resolving against this machine', () => {
    expect(fileUriFromPath('/work/my proj')).toBe('file:///work/my%20proj');
    expect(fileUriFromPath('/a/100%')).toBe('file:///a/100%25');
    // A remote host's path is never made absolute here (pathToFileURL would prepend this cwd).
    expect(fileUriFromPath('/../x')).toBe('file:///../x');
    expect(fileUriFromPath('C:\\Users\\me\\my dir')).toBe('file:///C:/Users/me/my%20dir');
  });

  it('reads URIs other clients write (pathToFileURL, unencoded safe characters)', () => {
    expect(pathFromFileUri('file:///home/dev/a%20b')).toBe('/home/dev/a b');
    expect(pathFromFileUri("file:///home/dev/it's")).toBe("/home/dev/it's");
    expect(pathFromFileUri('file://localhost/etc')).toBe('/etc');
  });

  it.each([
    ['/tmp', 'cwd', /^invalid URI in cwd: "\/tmp" is not a URI; send a file:\/\/ URI$/],
    [
      'https://example.com/x',
      'path',
      /^invalid URI in path: "https:\/\/example.com\/x" is not a file:\/\/ URI$/,
    ],
    ['file://host/x', 'path', /^invalid URI in path: File URL host must be "localhost" or empty/],
  ])('refuses %j in %s with an issue that names the field', (uri, field, message) => {
    let caught: unknown;
    try {
      pathFromFileUri(uri, field);
    } catch (error) {
      caught = error;
    }
    expect(InvalidArgumentsError.isInstance(caught)).toBe(true);
    const { issues } = caught as InvalidArgumentsError;
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe(field);
    expect(issues[0]?.message).toMatch(message);
  });
});
