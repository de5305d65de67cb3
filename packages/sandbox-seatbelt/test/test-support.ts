import { posix } from 'node:path';
import { type FsView, memoryFsView } from '@ux/protocol-utils';
import { parseSbpl, type SbplNode } from '../src/parse-sbpl.js';

/*
 * A small evaluator of the SBPL subset ux writes, for tests (there is no Mac here): the last matching
 * rule wins, as in Seatbelt; filters are matched against the path string as the process spelled it,
 * parameters substituted. It cannot say what the kernel does; it says what the profile text means under
 * that model.
 */

export type Decision = 'allow' | 'deny';

export interface Query {
  operation: string;
  path: string;
  /** For `vnode-type` filters; a rule that needs it throws when it is not given. */
  vnode?: string;
}

export function evaluateSbpl(
  profile: string,
  parameters: readonly [string, string][],
  query: Query,
): Decision {
  const values = new Map(parameters);
  const head = (node: SbplNode) =>
    node.type === 'list' && node.items[0]?.type === 'symbol' ? node.items[0].value : undefined;
  const argument = (node: SbplNode | undefined): string => {
    if (node?.type === 'string') return node.value;
    if (node?.type === 'list' && head(node) === 'param' && node.items[1]?.type === 'string') {
      const value = values.get(node.items[1].value);
      if (value === undefined) throw new Error(`parameter ${node.items[1].value} has no value`);
      return value;
    }
    throw new Error(`cannot evaluate argument ${JSON.stringify(node)}`);
  };
  const matches = (filter: SbplNode): boolean => {
    if (filter.type !== 'list') throw new Error(`not a filter: ${JSON.stringify(filter)}`);
    const [, ...args] = filter.items;
    const path = query.path;
    switch (head(filter)) {
      case 'require-all':
        return args.every(matches);
      case 'require-any':
        return args.some(matches);
      case 'require-not':
        return !matches(args[0]!);
      case 'literal':
        return path === argument(args[0]);
      case 'subpath': {
        const base = argument(args[0]);
        return base === '/' ? path.startsWith('/') : path === base || path.startsWith(`${base}/`);
      }
      case 'prefix':
        return path.startsWith(argument(args[0]));
      case 'regex':
        return new RegExp(argument(args[0])).test(path);
      case 'extension':
        return false; // no sandbox extension is ever issued here
      case 'vnode-type':
        if (query.vnode === undefined) throw new Error('this rule needs the vnode type of the path');
        return args[0]?.type === 'symbol' && args[0].value === query.vnode;
      default:
        throw new Error(`the evaluator does not know filter ${head(filter)}`);
    }
  };
  const covers = (operation: string) =>
    operation === 'default' ||
    operation === query.operation ||
    (operation.endsWith('*') && query.operation.startsWith(operation.slice(0, -1)));

  let decision: Decision | undefined;
  for (const form of parseSbpl(profile)) {
    const action = head(form);
    if (action === 'version') continue;
    if (form.type !== 'list' || (action !== 'allow' && action !== 'deny')) {
      throw new Error(`the evaluator does not know form ${action}`);
    }
    const rest = form.items.slice(1);
    const operations = rest.flatMap((item) => (item.type === 'symbol' ? [item.value] : []));
    const filters = rest.filter((item) => item.type === 'list' && head(item) !== 'with');
    if (!operations.some(covers)) continue;
    if (filters.length === 0 || filters.some(matches)) decision = action;
  }
  if (decision === undefined) throw new Error('the profile has no (deny default)');
  return decision;
}

/**
 * `memoryFsView` answers `kind` for the literal path only; a real lstat follows links in the parent
 * directories (`/var/folders/…` through `/var`). This view does the same.
 */
export function macFs(entries: Record<string, string>): FsView {
  const base = memoryFsView(entries);
  const throughParent = (path: string) => {
    const parent = path === '/' ? undefined : base.realpath(posix.dirname(path));
    return parent === undefined ? path : posix.join(parent, posix.basename(path));
  };
  return {
    kind: (p) => base.kind(throughParent(p)),
    readFile: (p) => base.readFile(p),
    readdir: (p) => base.readdir(base.realpath(p) ?? p),
    realpath: (p) => base.realpath(p),
  };
}
