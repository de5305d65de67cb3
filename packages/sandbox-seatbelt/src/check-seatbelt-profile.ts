import { parseSbpl, type SbplNode, SbplSyntaxError } from './parse-sbpl.js';
import { SBPL_STRING_MAX_BYTES, utf8Length } from './sbpl-text.js';

/** What a filter can apply to; an operation accepts only filters of its own kind. */
type Kind =
  | 'file'
  | 'target'
  | 'mach'
  | 'sysctl'
  | 'ipc'
  | 'iokit'
  | 'network'
  | 'socket'
  | 'unix-path'
  | 'none';

/** Seatbelt operations ux may write, by the kind of filter they take. Anything else is a typo. */
const OPERATIONS: Record<string, Kind> = {
  default: 'none',
  'file-read*': 'file',
  'file-read-data': 'file',
  'file-read-metadata': 'file',
  'file-read-xattr': 'file',
  'file-write*': 'file',
  'file-write-data': 'file',
  'file-write-create': 'file',
  'file-write-unlink': 'file',
  'file-write-flags': 'file',
  'file-write-mode': 'file',
  'file-write-owner': 'file',
  'file-write-times': 'file',
  'file-write-xattr': 'file',
  'file-ioctl': 'file',
  'file-map-executable': 'file',
  'process-exec': 'file',
  'process-fork': 'none',
  'process-info*': 'target',
  signal: 'target',
  'mach-lookup': 'mach',
  'sysctl-read': 'sysctl',
  'sysctl-write': 'sysctl',
  'ipc-posix-sem': 'none',
  'ipc-posix-shm-read*': 'ipc',
  'ipc-posix-shm-read-data': 'ipc',
  'ipc-posix-shm-write-create': 'ipc',
  'ipc-posix-shm-write-data': 'ipc',
  'ipc-posix-shm-write-unlink': 'ipc',
  'iokit-open': 'iokit',
  'network*': 'network',
  'network-outbound': 'network',
  'network-inbound': 'network',
  'network-bind': 'network',
  'system-socket': 'socket',
  'pseudo-tty': 'none',
  'user-preference-read': 'none',
};

type Argument = 'path' | 'regex' | 'string' | 'vnode' | 'target' | 'domain' | 'number' | 'address';

const FILTERS: Record<string, { kind: Kind; argument: Argument }> = {
  literal: { kind: 'file', argument: 'path' },
  subpath: { kind: 'file', argument: 'path' },
  prefix: { kind: 'file', argument: 'path' },
  regex: { kind: 'file', argument: 'regex' },
  'vnode-type': { kind: 'file', argument: 'vnode' },
  extension: { kind: 'file', argument: 'string' },
  target: { kind: 'target', argument: 'target' },
  'global-name': { kind: 'mach', argument: 'string' },
  'local-name': { kind: 'mach', argument: 'string' },
  'sysctl-name': { kind: 'sysctl', argument: 'string' },
  'sysctl-name-prefix': { kind: 'sysctl', argument: 'string' },
  'ipc-posix-name': { kind: 'ipc', argument: 'string' },
  'ipc-posix-name-prefix': { kind: 'ipc', argument: 'string' },
  'ipc-posix-name-regex': { kind: 'ipc', argument: 'regex' },
  'iokit-registry-entry-class': { kind: 'iokit', argument: 'string' },
  'iokit-user-client-class': { kind: 'iokit', argument: 'string' },
  'socket-domain': { kind: 'socket', argument: 'domain' },
  'socket-protocol': { kind: 'socket', argument: 'number' },
  local: { kind: 'network', argument: 'address' },
  remote: { kind: 'network', argument: 'address' },
  // The path of a unix socket, inside `(remote unix-socket …)`.
  'path-literal': { kind: 'unix-path', argument: 'path' },
};

/** Seatbelt's host token is `localhost` or `*`; the port a number or `*`. */
const IP_ADDRESS = /^(localhost|\*):(\*|[1-9][0-9]{0,4})$/;

const VNODE_TYPES = [
  'REGULAR-FILE',
  'DIRECTORY',
  'SYMLINK',
  'CHARACTER-DEVICE',
  'BLOCK-DEVICE',
  'FIFO',
  'SOCKET',
];
const TARGETS = ['same-sandbox', 'self'];
const SOCKET_DOMAINS = ['AF_UNIX', 'AF_INET', 'AF_INET6', 'AF_SYSTEM'];

/**
 * Checks a generated profile's structure, so a typo cannot hide in a golden file: it must parse as
 * S-expressions, start with `(version 1)` and `(deny default)`, never `(allow default)`, and use only known
 * operations with filters of their kind; every `(param …)` must be one of `parameters` and every parameter
 * used; every string literal must stay within the 900-byte limit, and every regex must be valid and
 * anchored with `^`; a network address is `ip` or `tcp` with a `localhost:PORT`, `*:PORT` or `*:*` value
 * (a literal, or a parameter whose value is checked), or `unix-socket` with at most a `path-literal`.
 * Returns the problems (empty when none).
 */
export function checkSeatbeltProfile(
  text: string,
  parameters: readonly (readonly [string, string])[],
): string[] {
  const problems: string[] = [];
  let nodes: SbplNode[];
  try {
    nodes = parseSbpl(text);
  } catch (error) {
    if (SbplSyntaxError.isInstance(error)) return [error.message];
    throw error;
  }
  const at = (node: SbplNode) => `line ${text.slice(0, node.offset).split('\n').length}`;
  const report = (node: SbplNode, message: string) => problems.push(`${at(node)}: ${message}`);
  const declared = new Map<string, number>();
  for (const [name] of parameters) declared.set(name, (declared.get(name) ?? 0) + 1);
  const values = new Map<string, string>(parameters.map(([name, value]) => [name, value]));
  for (const [name, count] of declared)
    if (count > 1) problems.push(`parameter ${name} is defined ${count} times`);
  const used = new Set<string>();

  const head = (node: SbplNode | undefined) =>
    node?.type === 'list' && node.items[0]?.type === 'symbol' ? node.items[0].value : undefined;

  if (head(nodes[0]) !== 'version' || !isNumber(nodes[0], 1))
    problems.push('the profile must start with (version 1)');
  const second = nodes[1];
  if (head(second) !== 'deny' || second?.type !== 'list' || !isSymbol(second.items[1], 'default')) {
    problems.push('the second form must be (deny default)');
  }

  const checkString = (node: SbplNode, regex: boolean) => {
    if (node.type !== 'string') return report(node, `expected a ${regex ? '#"regex"' : '"string"'}`);
    if (node.regex !== regex) report(node, `expected a ${regex ? '#"regex"' : '"string"'} literal`);
    if (utf8Length(node.value) > SBPL_STRING_MAX_BYTES) {
      report(node, `string literal of ${utf8Length(node.value)} bytes is over ${SBPL_STRING_MAX_BYTES}`);
    }
    if (/[\u0000-\u001f\u007f]/.test(node.value)) report(node, 'string literal holds a control character');
    if (regex) {
      try {
        new RegExp(node.value);
      } catch {
        report(node, `invalid regular expression ${JSON.stringify(node.value)}`);
      }
      // ux's regexes count path components from the start; an unanchored one would match anywhere.
      if (!node.value.startsWith('^'))
        report(node, `regular expression ${JSON.stringify(node.value)} is not anchored with ^`);
    }
  };

  const checkArgument = (node: SbplNode | undefined, argument: Argument, owner: SbplNode) => {
    if (node === undefined) return report(owner, 'filter is missing its argument');
    switch (argument) {
      case 'path':
        if (node.type === 'list' && head(node) === 'param') {
          const name = node.items[1];
          if (node.items.length !== 2 || name?.type !== 'string' || name.regex) {
            return report(node, '(param …) takes one "NAME"');
          }
          used.add(name.value);
          if (!declared.has(name.value)) report(node, `parameter ${name.value} is not defined with -D`);
          return;
        }
        return checkString(node, false);
      case 'regex':
        return checkString(node, true);
      case 'string':
        return checkString(node, false);
      case 'vnode':
        if (!(node.type === 'symbol' && VNODE_TYPES.includes(node.value))) report(node, 'unknown vnode-type');
        return;
      case 'target':
        if (!(node.type === 'symbol' && TARGETS.includes(node.value))) report(node, 'unknown target');
        return;
      case 'domain':
        if (!(node.type === 'symbol' && SOCKET_DOMAINS.includes(node.value)))
          report(node, 'unknown socket domain');
        return;
      case 'number':
        if (node.type !== 'number') report(node, 'expected a number');
        return;
      case 'address':
        // Checked whole by checkAddress.
        return;
    }
  };

  // (local|remote ip|tcp "host:port") with a literal or a parameter; (… unix-socket [path filter]).
  const checkAddress = (node: Extract<SbplNode, { type: 'list' }>, name: string) => {
    const [, family, ...rest] = node.items;
    if (isSymbol(family, 'ip') || isSymbol(family, 'tcp')) {
      const [address] = rest;
      if (rest.length !== 1 || address === undefined) {
        return report(node, `(${name} ip|tcp …) takes one "host:port"`);
      }
      checkArgument(address, 'path', node);
      const value =
        address.type === 'string'
          ? address.value
          : address.type === 'list' && address.items[1]?.type === 'string'
            ? values.get(address.items[1].value)
            : undefined;
      if (value === undefined) return;
      const port = IP_ADDRESS.exec(value)?.[2];
      if (port === undefined || (port !== '*' && Number(port) > 65535)) {
        report(address, `address ${JSON.stringify(value)} is not localhost:PORT, *:PORT or *:*`);
      }
      return;
    }
    if (isSymbol(family, 'unix-socket')) {
      if (rest.length > 1) report(node, `(${name} unix-socket …) takes at most one path filter`);
      for (const extra of rest) checkFilter(extra, new Set(['unix-path']), 'a unix socket');
      return;
    }
    report(family ?? node, 'expected ip, tcp or unix-socket');
  };

  const checkFilter = (node: SbplNode, kinds: Set<Kind>, operation: string) => {
    const name = head(node);
    if (node.type !== 'list' || name === undefined) return report(node, 'expected a filter list');
    if (name === 'require-all' || name === 'require-any' || name === 'require-not') {
      const children = node.items.slice(1);
      if (children.length === 0 || (name === 'require-not' && children.length !== 1)) {
        report(node, `${name} has ${children.length} filters`);
      }
      for (const child of children) checkFilter(child, kinds, operation);
      return;
    }
    const filter = FILTERS[name];
    if (!filter) return report(node, `unknown filter ${name}`);
    for (const kind of kinds) {
      if (kind !== filter.kind) report(node, `filter ${name} does not apply to ${operation}`);
    }
    if (filter.argument === 'address') return checkAddress(node, name);
    if (node.items.length !== 2) report(node, `filter ${name} takes one argument`);
    checkArgument(node.items[1], filter.argument, node);
  };

  for (const [index, node] of nodes.entries()) {
    const action = head(node);
    if (node.type !== 'list' || action === undefined) {
      report(node, 'top-level forms must be lists');
      continue;
    }
    if (action === 'version') {
      if (index !== 0) report(node, '(version …) must come first, once');
      continue;
    }
    if (action !== 'allow' && action !== 'deny') {
      report(node, `unknown top-level form ${action}`);
      continue;
    }
    const rest = node.items.slice(1);
    const firstFilter = rest.findIndex((item) => item.type !== 'symbol');
    const operations = (firstFilter === -1 ? rest : rest.slice(0, firstFilter)).filter(
      (item): item is Extract<SbplNode, { type: 'symbol' }> => item.type === 'symbol',
    );
    const lists = rest.filter((item) => item.type === 'list');
    if (operations.length === 0) report(node, `${action} names no operation`);
    if (firstFilter !== -1 && rest.slice(firstFilter).some((item) => item.type === 'symbol')) {
      report(node, 'operations must come before filters');
    }
    for (const item of rest)
      if (item.type !== 'symbol' && item.type !== 'list') report(item, 'unexpected atom');
    const kinds = new Set<Kind>();
    for (const operation of operations) {
      const kind = OPERATIONS[operation.value];
      if (kind === undefined) report(operation, `unknown operation ${operation.value}`);
      else kinds.add(kind);
      if (operation.value === 'default' && action === 'allow') {
        report(operation, '(allow default) would turn the sandbox off');
      }
    }
    const label = operations.map((operation) => operation.value).join(' ');
    for (const list of lists) {
      if (head(list) === 'with') {
        const modifier = list.type === 'list' ? list.items[1] : undefined;
        if (isSymbol(modifier, 'no-sandbox')) {
          if (label !== 'process-exec' || action !== 'allow')
            report(list, '(with no-sandbox) only on allow process-exec');
        } else if (isSymbol(modifier, 'message') && list.type === 'list' && list.items.length === 3) {
          checkString(list.items[2]!, false);
        } else report(list, 'unknown (with …) modifier');
        continue;
      }
      if (kinds.has('none')) report(list, `${label} takes no filter`);
      else checkFilter(list, kinds, label);
    }
  }

  for (const name of declared.keys()) if (!used.has(name)) problems.push(`parameter ${name} is never used`);
  return problems;
}

function isSymbol(node: SbplNode | undefined, value: string): boolean {
  return node?.type === 'symbol' && node.value === value;
}

function isNumber(node: SbplNode | undefined, value: number): boolean {
  return node?.type === 'list' && node.items[1]?.type === 'number' && node.items[1].value === value;
}
