import { describe, expect, it } from 'vitest';
import { win32MemoryFsView } from './win32-memory-fs-view.js';

describe('win32MemoryFsView', () => {
  const fs = win32MemoryFsView({
    'C:\\Work\\App\\.git\\config': '[core]',
    'C:\\Work\\Link': '-> D:\\Real',
    'D:\\Real\\file.txt': 'x',
    '\\\\server\\share\\repo\\': '',
  });

  it('answers case-insensitively with the stored spelling', () => {
    expect(fs.kind('c:\\work\\app\\.GIT\\CONFIG')).toBe('file');
    expect(fs.kind('C:\\Work')).toBe('dir');
    expect(fs.realpath('c:\\work\\app')).toBe('C:\\Work\\App');
    expect(fs.readFile('C:/Work/App/.git/config')).toBe('[core]');
    expect(fs.kind('C:\\Work\\Missing')).toBeUndefined();
  });

  it('follows links in parents but reports a link itself as a link', () => {
    expect(fs.kind('C:\\Work\\Link')).toBe('symlink');
    expect(fs.kind('C:\\Work\\Link\\file.txt')).toBe('file');
    expect(fs.realpath('C:\\Work\\Link\\file.txt')).toBe('D:\\Real\\file.txt');
    expect(fs.readdir('c:\\work')).toEqual(['App', 'Link']);
  });

  it('handles UNC shares and drive roots', () => {
    expect(fs.kind('\\\\server\\share\\repo')).toBe('dir');
    expect(fs.realpath('\\\\SERVER\\share\\repo')).toBe('\\\\server\\share\\repo');
    expect(fs.realpath('C:\\')).toBe('C:\\');
    expect(fs.kind('C:\\')).toBe('dir');
  });
});
