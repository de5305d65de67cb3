import { ConfigError } from '@ux/protocol/core';

/** A 1-based position in a rule file. */
export interface Position {
  line: number;
  column: number;
}

/** A literal argument value; anything else is kept only to be named in an error. */
export type StarlarkValue =
  | { kind: 'string'; value: string; at: Position }
  | { kind: 'list'; items: StarlarkValue[]; at: Position }
  | { kind: 'other'; description: string; at: Position };

export interface StarlarkArgument {
  /** Set for `name = value`. */
  name?: string;
  value: StarlarkValue;
  at: Position;
}

/** A top-level call statement: `name(arguments)`. */
export interface StarlarkCall {
  name: string;
  arguments: StarlarkArgument[];
  at: Position;
}

type Token =
  | { type: 'identifier'; value: string; at: Position }
  | { type: 'string'; value: string; at: Position }
  | { type: 'number'; value: string; at: Position }
  | { type: 'punctuation'; value: string; at: Position }
  | { type: 'newline'; at: Position }
  | { type: 'indent'; at: Position }
  | { type: 'end'; at: Position };

const KEYWORDS = new Set([
  'and',
  'break',
  'continue',
  'def',
  'elif',
  'else',
  'for',
  'if',
  'in',
  'lambda',
  'load',
  'not',
  'or',
  'pass',
  'return',
  'while',
]);

/**
 * Parses the statement subset of Starlark that rule files use: top-level calls whose arguments are
 * string and list literals, with comments, blank lines, line joining inside brackets, backslash
 * continuations and `;` between calls. Everything else (assignments, `def`, `load`, `if`, expressions)
 * is a `ConfigError` at its file:line:column saying what was found.
 */
export function parseStarlarkCalls(text: string, file: string): StarlarkCall[] {
  return new CallParser(tokenize(text, file), file).parseFile();
}

class CallParser {
  private index = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly file: string,
  ) {}

  parseFile(): StarlarkCall[] {
    const calls: StarlarkCall[] = [];
    for (;;) {
      const token = this.peek();
      if (token.type === 'end') return calls;
      if (token.type === 'indent') {
        throw this.error(token, 'unexpected indentation: a rule starts at the beginning of its line');
      }
      if (token.type === 'newline' || isPunctuation(token, ';')) {
        this.index++;
        continue;
      }
      calls.push(this.parseCall());
      const after = this.peek();
      if (after.type !== 'newline' && after.type !== 'end' && !isPunctuation(after, ';')) {
        throw this.error(after, `expected a new line after the closing ")", found ${describe(after)}`);
      }
    }
  }

  private parseCall(): StarlarkCall {
    const head = this.next();
    if (head.type === 'identifier' && KEYWORDS.has(head.value)) {
      throw this.error(head, `\`${head.value}\` statements are not supported in rule files; ${ONLY_CALLS}`);
    }
    if (head.type !== 'identifier')
      throw this.error(head, `expected a rule, found ${describe(head)}; ${ONLY_CALLS}`);
    const open = this.next();
    if (isPunctuation(open, '=')) {
      throw this.error(
        head,
        `assignments (\`${head.value} = …\`) are not supported in rule files; ${ONLY_CALLS}`,
      );
    }
    if (!isPunctuation(open, '(')) {
      throw this.error(open, `expected "(" after ${head.value}, found ${describe(open)}; ${ONLY_CALLS}`);
    }
    const args: StarlarkArgument[] = [];
    for (;;) {
      if (isPunctuation(this.peek(), ')')) break;
      args.push(this.parseArgument());
      const separator = this.next();
      if (isPunctuation(separator, ')')) return { name: head.value, arguments: args, at: head.at };
      if (!isPunctuation(separator, ',')) {
        throw this.error(separator, `expected "," or ")" after an argument, found ${describe(separator)}`);
      }
    }
    this.index++;
    return { name: head.value, arguments: args, at: head.at };
  }

  private parseArgument(): StarlarkArgument {
    const first = this.peek();
    const second = this.tokens[this.index + 1];
    if (first.type === 'identifier' && second && isPunctuation(second, '=')) {
      this.index += 2;
      return { name: first.value, value: this.parseValue(), at: first.at };
    }
    return { value: this.parseValue(), at: first.at };
  }

  private parseValue(): StarlarkValue {
    const token = this.next();
    let value: StarlarkValue;
    if (token.type === 'string') value = { kind: 'string', value: token.value, at: token.at };
    else if (isPunctuation(token, '[')) value = this.parseList(token.at);
    else if (token.type === 'identifier' || token.type === 'number') {
      value = { kind: 'other', description: `\`${token.value}\``, at: token.at };
    } else {
      throw this.error(token, `expected a value (a string or a list), found ${describe(token)}`);
    }
    const after = this.peek();
    if (after.type === 'punctuation' && !',)]'.includes(after.value)) {
      throw this.error(
        after,
        `expressions are not supported in rule files, found ${describe(after)}; write string and list literals`,
      );
    }
    return value;
  }

  private parseList(at: Position): StarlarkValue {
    const items: StarlarkValue[] = [];
    for (;;) {
      if (isPunctuation(this.peek(), ']')) {
        this.index++;
        return { kind: 'list', items, at };
      }
      items.push(this.parseValue());
      const separator = this.next();
      if (isPunctuation(separator, ']')) return { kind: 'list', items, at };
      if (!isPunctuation(separator, ',')) {
        throw this.error(separator, `expected "," or "]" in a list, found ${describe(separator)}`);
      }
    }
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.type !== 'end') this.index++;
    return token;
  }

  private error(token: Token, reason: string): ConfigError {
    return new ConfigError({ file: this.file, line: token.at.line, column: token.at.column, reason });
  }
}

const ONLY_CALLS = 'a rule file holds only prefix_rule(...) and host_executable(...) calls';

function isPunctuation(token: Token, value: string): boolean {
  return token.type === 'punctuation' && token.value === value;
}

function describe(token: Token): string {
  switch (token.type) {
    case 'end':
      return 'the end of the file';
    case 'newline':
      return 'the end of the line';
    case 'indent':
      return 'an indented line';
    case 'string':
      return `the string ${JSON.stringify(token.value)}`;
    default:
      return `"${token.value}"`;
  }
}

const STRING_PREFIXES = new Set([
  'r',
  'R',
  'b',
  'B',
  'f',
  'F',
  'rb',
  'rB',
  'Rb',
  'RB',
  'br',
  'bR',
  'Br',
  'BR',
]);

function tokenize(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  let atLineStart = true;
  const at = (offset = i): Position => ({ line, column: offset - lineStart + 1 });
  const fail = (position: Position, reason: string) =>
    new ConfigError({ file, line: position.line, column: position.column, reason });
  const newline = () => {
    line++;
    lineStart = i;
  };
  // Multi-line (triple-quoted) strings move the line count along with them.
  const skipString = (end: number) => {
    for (let k = i; k < end; k++) {
      if (text[k] === '\n') {
        line++;
        lineStart = k + 1;
      }
    }
    i = end;
  };

  while (i < text.length) {
    const char = text[i]!;
    if (atLineStart && depth === 0) {
      // Starlark is indentation-sensitive: a top-level call must start in column 1.
      let j = i;
      while (text[j] === ' ' || text[j] === '\t') j++;
      const first = text[j];
      // Reported by the parser, so a `def` or `if` above an indented body is named first.
      if (j > i && first !== undefined && first !== '\n' && first !== '\r' && first !== '#') {
        tokens.push({ type: 'indent', at: at(j) });
      }
      atLineStart = false;
    }
    if (char === ' ' || char === '\t' || char === '\r' || char === '\f') {
      i++;
    } else if (char === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (char === '\\' && (text[i + 1] === '\n' || (text[i + 1] === '\r' && text[i + 2] === '\n'))) {
      i += text[i + 1] === '\n' ? 2 : 3;
      newline();
    } else if (char === '\n') {
      if (depth === 0 && tokens.length > 0 && tokens[tokens.length - 1]!.type !== 'newline') {
        tokens.push({ type: 'newline', at: at() });
      }
      i++;
      newline();
      atLineStart = depth === 0;
    } else if (isIdentifierStart(char)) {
      const start = i;
      while (i < text.length && isIdentifierPart(text[i]!)) i++;
      const word = text.slice(start, i);
      if ((text[i] === '"' || text[i] === "'") && STRING_PREFIXES.has(word)) {
        const lower = word.toLowerCase();
        if (lower.includes('b'))
          throw fail(at(start), 'bytes literals are not supported; use a plain string');
        if (lower.includes('f')) throw fail(at(start), 'f-strings are not supported; use a plain string');
        const position = at(start);
        const string = readString(text, i, true, file, position);
        tokens.push({ type: 'string', value: string.value, at: position });
        skipString(string.end);
      } else {
        tokens.push({ type: 'identifier', value: word, at: at(start) });
      }
    } else if (char === '"' || char === "'") {
      const position = at();
      const string = readString(text, i, false, file, position);
      tokens.push({ type: 'string', value: string.value, at: position });
      skipString(string.end);
    } else if (char >= '0' && char <= '9') {
      const start = i;
      while (i < text.length && isIdentifierPart(text[i]!)) i++;
      tokens.push({ type: 'number', value: text.slice(start, i), at: at(start) });
    } else {
      if ('([{'.includes(char)) depth++;
      else if (')]}'.includes(char)) depth = Math.max(0, depth - 1);
      tokens.push({ type: 'punctuation', value: char, at: at() });
      i++;
    }
  }
  tokens.push({ type: 'end', at: at() });
  return tokens;
}

function isIdentifierStart(char: string): boolean {
  return (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z') || char === '_';
}

function isIdentifierPart(char: string): boolean {
  return isIdentifierStart(char) || (char >= '0' && char <= '9');
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  r: '\r',
  t: '\t',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

/** Reads a string literal starting at its opening quote; returns its value and the index after it. */
function readString(
  text: string,
  start: number,
  raw: boolean,
  file: string,
  position: Position,
): { value: string; end: number } {
  const quote = text[start]!;
  const triple = text.startsWith(quote.repeat(3), start);
  const delimiter = triple ? quote.repeat(3) : quote;
  const fail = (reason: string) =>
    new ConfigError({ file, line: position.line, column: position.column, reason });
  let value = '';
  let i = start + delimiter.length;
  for (;;) {
    if (i >= text.length) throw fail('unterminated string');
    if (text.startsWith(delimiter, i)) return { value, end: i + delimiter.length };
    const char = text[i]!;
    if (char === '\n' && !triple)
      throw fail('unterminated string (a newline inside "…"; use """…""" or \\n)');
    if (char !== '\\') {
      value += char;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) throw fail('unterminated string');
    if (raw) {
      // A raw string keeps the backslash; it still cannot end on an escaped quote.
      value += char + next;
      i += 2;
      continue;
    }
    if (next === '\n') {
      i += 2;
    } else if (SIMPLE_ESCAPES[next] !== undefined) {
      value += SIMPLE_ESCAPES[next];
      i += 2;
    } else if (next >= '0' && next <= '7') {
      let digits = '';
      let j = i + 1;
      while (digits.length < 3 && text[j] !== undefined && text[j]! >= '0' && text[j]! <= '7')
        digits += text[j++];
      value += String.fromCodePoint(Number.parseInt(digits, 8));
      i = j;
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const digits = text.slice(i + 2, i + 2 + length);
      if (digits.length !== length || ![...digits].every((d) => '0123456789abcdefABCDEF'.includes(d))) {
        throw fail(`invalid \\${next} escape: expected ${length} hexadecimal digits`);
      }
      const code = Number.parseInt(digits, 16);
      if (code > 0x10ffff) throw fail(`invalid \\${next} escape: ${digits} is not a Unicode code point`);
      value += String.fromCodePoint(code);
      i += 2 + length;
    } else {
      throw fail(`unknown escape \\${next} in a string (write \\\\ for a backslash)`);
    }
  }
}
