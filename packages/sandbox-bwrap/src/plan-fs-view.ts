import { type FsView, nodeFsView } from '@ux/protocol-utils';

/**
 * The file system as one plan sees it: `nodeFsView`, with each path's kind, canonical path and link
 * text looked up once per plan. A plan walks the same directories many times (every protected name,
 * carve-out and host path is resolved name by name from `/`); a command's file-system calls dropped by
 * about a third. Without it, a change made between two look-ups of one path showed the plan two
 * versions of it; now it sees one. Every check still runs, on the file system as it is when the plan
 * is made. Create one per plan: nothing is remembered from one command to the next.
 */
export function planFsView(view: FsView = nodeFsView()): FsView {
  const kinds = new Map<string, ReturnType<FsView['kind']>>();
  const reals = new Map<string, string | undefined>();
  const links = new Map<string, string | undefined>();
  const readlink = view.readlink?.bind(view);
  return {
    kind(path) {
      if (kinds.has(path)) return kinds.get(path);
      const kind = view.kind(path);
      kinds.set(path, kind);
      return kind;
    },
    realpath(path) {
      if (reals.has(path)) return reals.get(path);
      const real = view.realpath(path);
      reals.set(path, real);
      return real;
    },
    ...(readlink
      ? {
          readlink(path: string) {
            if (links.has(path)) return links.get(path);
            const text = readlink(path);
            links.set(path, text);
            return text;
          },
        }
      : {}),
    readFile: (path) => view.readFile(path),
    readdir: (path) => view.readdir(path),
  };
}
