import type { FsView } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { planFsView } from './plan-fs-view.js';

function countingView(): { view: FsView; calls: string[] } {
  const calls: string[] = [];
  const view: FsView = {
    kind: (path) => {
      calls.push(`kind ${path}`);
      return path === '/missing' ? undefined : path === '/link' ? 'symlink' : 'dir';
    },
    realpath: (path) => {
      calls.push(`realpath ${path}`);
      return path === '/missing' ? undefined : `/real${path}`;
    },
    readlink: (path) => {
      calls.push(`readlink ${path}`);
      return path === '/link' ? 'target' : undefined;
    },
    readFile: (path) => {
      calls.push(`readFile ${path}`);
      return 'text';
    },
    readdir: (path) => {
      calls.push(`readdir ${path}`);
      return ['a'];
    },
  };
  return { view, calls };
}

describe('planFsView', () => {
  it('asks the file system once per path for kinds, canonical paths and link texts, absent answers included', () => {
    const { view, calls } = countingView();
    const fs = planFsView(view);
    for (let i = 0; i < 3; i++) {
      expect(fs.kind('/a')).toBe('dir');
      expect(fs.kind('/missing')).toBeUndefined();
      expect(fs.realpath('/a')).toBe('/real/a');
      expect(fs.realpath('/missing')).toBeUndefined();
      expect(fs.readlink?.('/link')).toBe('target');
      expect(fs.readlink?.('/a')).toBeUndefined();
    }
    expect(calls).toEqual([
      'kind /a',
      'kind /missing',
      'realpath /a',
      'realpath /missing',
      'readlink /link',
      'readlink /a',
    ]);
  });

  it('reads files and directories every time, and each view starts with nothing remembered', () => {
    const { view, calls } = countingView();
    const first = planFsView(view);
    first.readFile('/f');
    first.readFile('/f');
    first.readdir('/d');
    first.readdir('/d');
    first.kind('/a');
    planFsView(view).kind('/a');
    expect(calls).toEqual(['readFile /f', 'readFile /f', 'readdir /d', 'readdir /d', 'kind /a', 'kind /a']);
  });

  it('has no readlink when the view it wraps has none', () => {
    const { view } = countingView();
    const { readlink: _, ...withoutReadlink } = view;
    expect(planFsView(withoutReadlink).readlink).toBeUndefined();
  });
});
