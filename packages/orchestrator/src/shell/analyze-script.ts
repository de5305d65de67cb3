/** The part of a tree-sitter node this module reads (web-tree-sitter's `Node` satisfies it). */
export interface SyntaxNode {
  readonly type: string;
  readonly isNamed: boolean;
  readonly hasError: boolean;
  readonly text: string;
  readonly startIndex: number;
  readonly endIndex: number;
  readonly children: readonly SyntaxNode[];
  readonly namedChildren: readonly SyntaxNode[];
}

/** A command found anywhere in a script whose name is a literal word. */
export interface LiteralCommand {
  /** Word values; `null` where the shell would expand the word (variables, substitutions, globs). */
  readonly words: readonly (string | null)[];
  /** The source text of each word, for messages. */
  readonly display: readonly string[];
}

/** What a `bash -c` script contains, as far as policy cares. */
export interface ScriptAnalysis {
  /** The script parsed without syntax errors. */
  readonly parsed: boolean;
  /**
   * The commands of a plain script: simple commands made only of literal words and quoted strings,
   * joined by `&&`, `||`, `;`, `|` or newlines. `null` when the script is anything else (redirections,
   * substitutions, expansions, globs, subshells, control flow, heredocs, background jobs, assignments).
   * Empty for an empty or whitespace-only script.
   */
  readonly plain: readonly string[][] | null;
  /**
   * The one command of a script that is a single literal command fed by a heredoc
   * (`python3 <<'EOF' … EOF`) and writes no file. Rule matching may use it; it never makes a script
   * known-safe.
   */
  readonly heredoc: readonly string[] | null;
  /** Every command with a literal name, including those nested in substitutions, loops and subshells. */
  readonly commands: readonly LiteralCommand[];
}

// Named node kinds a plain script may contain, and the only operator tokens it may use.
const PLAIN_KINDS = new Set([
  'program',
  'list',
  'pipeline',
  'command',
  'command_name',
  'word',
  'number',
  'string',
  'string_content',
  'raw_string',
  'concatenation',
  'comment',
]);
const PLAIN_TOKENS = new Set(['&&', '||', ';', '|', '"']);
const REDIRECT_KINDS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

/** Reads a parsed bash tree. `source` is the text the tree was parsed from. */
export function analyzeScript(root: SyntaxNode, source: string): ScriptAnalysis {
  const nodes = descendants(root);
  const commandNodes = nodes.filter((node) => node.type === 'command');
  const parsed = !root.hasError;
  return {
    parsed,
    plain: parsed ? plainCommands(nodes, commandNodes, source) : null,
    heredoc: parsed ? heredocCommand(nodes, commandNodes, source) : null,
    // Scanned even when the script has syntax errors: bash runs the commands before the error.
    commands: commandNodes.flatMap((node) => {
      const command = literalCommand(node, source);
      return command ? [command] : [];
    }),
  };
}

/** Every node in source order. */
function descendants(root: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const visit = (node: SyntaxNode) => {
    out.push(node);
    for (const child of node.children) visit(child);
  };
  visit(root);
  return out;
}

function plainCommands(
  nodes: readonly SyntaxNode[],
  commandNodes: readonly SyntaxNode[],
  source: string,
): string[][] | null {
  for (const node of nodes) {
    if (node.isNamed ? !PLAIN_KINDS.has(node.type) : !PLAIN_TOKENS.has(node.type)) return null;
  }
  const commands: string[][] = [];
  for (const node of commandNodes) {
    const words = commandWords(node, source);
    if (!words || words.some((word) => word === null)) return null;
    commands.push(words as string[]);
  }
  return commands;
}

function heredocCommand(
  nodes: readonly SyntaxNode[],
  commandNodes: readonly SyntaxNode[],
  source: string,
): string[] | null {
  if (!nodes.some((node) => node.type === 'heredoc_redirect')) return null;
  // A file redirect could write outside the sandbox, so the command no longer stands for the script.
  if (nodes.some((node) => node.type === 'file_redirect')) return null;
  if (commandNodes.length !== 1) return null;
  const words = commandWords(commandNodes[0]!, source);
  if (!words || words.length === 0 || words.some((word) => word === null)) return null;
  return words as string[];
}

/** The words of a command that has only a name and words; `null` if it has anything else. */
function commandWords(command: SyntaxNode, source: string): (string | null)[] | null {
  const parts: SyntaxNode[] = [];
  for (const child of command.namedChildren) {
    if (child.type === 'comment') continue;
    if (child.type === 'command_name') {
      const name = child.namedChildren[0];
      if (!name || child.namedChildren.length !== 1) return null;
      parts.push(name);
    } else if (WORD_KINDS.has(child.type)) {
      parts.push(child);
    } else {
      return null;
    }
  }
  return joinWords(parts, source).map((word) => word.value);
}

function literalCommand(command: SyntaxNode, source: string): LiteralCommand | null {
  const parts: SyntaxNode[] = [];
  let named = false;
  for (const child of command.namedChildren) {
    if (child.type === 'command_name') {
      const name = child.namedChildren[0];
      if (!name) return null;
      parts.push(name);
      named = true;
    } else if (named && !REDIRECT_KINDS.has(child.type) && child.type !== 'comment') {
      parts.push(child);
    }
    // Assignments before the name (`FOO=1 cmd`) and redirections do not change which program runs.
  }
  const words = joinWords(parts, source);
  if (words.length === 0 || words[0]!.value === null) return null;
  return { words: words.map((word) => word.value), display: words.map((word) => word.display) };
}

const WORD_KINDS = new Set(['word', 'number', 'string', 'raw_string', 'concatenation']);

/**
 * Turns word nodes into shell words. Two nodes with only line continuations between them are one
 * word to bash (`rm -r\<newline>f` is `rm -rf`), although the grammar splits them.
 */
function joinWords(
  parts: readonly SyntaxNode[],
  source: string,
): { value: string | null; display: string }[] {
  const words: { value: string | null; display: string }[] = [];
  let previous: SyntaxNode | undefined;
  for (const part of parts) {
    const value = literalValue(part);
    const last = words[words.length - 1];
    if (last && previous && !hasBlank(source.slice(previous.endIndex, part.startIndex))) {
      last.value = last.value === null || value === null ? null : last.value + value;
      last.display += part.text;
    } else {
      words.push({ value, display: part.text });
    }
    previous = part;
  }
  return words;
}

function hasBlank(gap: string): boolean {
  const withoutContinuations = gap.split('\\\n').join('');
  return withoutContinuations.includes(' ') || withoutContinuations.includes('\t');
}

/** The value bash gives a word, or `null` when bash would expand it. */
function literalValue(node: SyntaxNode): string | null {
  switch (node.type) {
    case 'word':
      return decodeUnquoted(node.text);
    case 'number':
      return node.namedChildren.length === 0 ? node.text : null;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'string':
      if (node.namedChildren.some((child) => child.type !== 'string_content')) return null;
      return decodeDoubleQuoted(node.text.slice(1, -1));
    case 'concatenation': {
      let value = '';
      for (const part of node.namedChildren) {
        const piece = literalValue(part);
        if (piece === null) return null;
        value += piece;
      }
      return value;
    }
    default:
      return null;
  }
}

// Unquoted characters that make bash expand a word (globs, braces, parameters, old-style substitution).
const EXPANDING = new Set(['*', '?', '[', '{', '}', '$', '`']);

function decodeUnquoted(text: string): string | null {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\') {
      const next = text[i + 1];
      i++;
      if (next === undefined) out += '\\';
      else if (next !== '\n') out += next;
    } else if (EXPANDING.has(char)) {
      return null;
    } else {
      out += char;
    }
  }
  return out;
}

// Inside double quotes a backslash escapes only these; elsewhere it stays.
const DOUBLE_QUOTE_ESCAPES = new Set(['$', '`', '"', '\\', '\n']);

function decodeDoubleQuoted(inner: string): string {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const char = inner[i]!;
    const next = inner[i + 1];
    if (char === '\\' && next !== undefined && DOUBLE_QUOTE_ESCAPES.has(next)) {
      if (next !== '\n') out += next;
      i++;
    } else {
      out += char;
    }
  }
  return out;
}
