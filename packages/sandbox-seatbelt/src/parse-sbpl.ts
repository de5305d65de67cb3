import { markError, UxError } from '@ux/protocol/core';

/** One node of an SBPL profile read as S-expressions. */
export type SbplNode =
  | { type: 'list'; items: SbplNode[]; offset: number }
  | { type: 'symbol'; value: string; offset: number }
  | { type: 'number'; value: number; offset: number }
  | { type: 'string'; value: string; regex: boolean; offset: number };

const SBPL_SYNTAX_ERROR = 'ux.error.sbpl-syntax';

/** SBPL text that does not read as S-expressions; `line` and `offset` say where. */
export class SbplSyntaxError extends UxError {
  constructor(
    message: string,
    readonly offset: number,
    readonly line: number,
  ) {
    super('sbpl_syntax_error', `line ${line}: ${message}`);
    this.name = 'SbplSyntaxError';
    markError(this, SBPL_SYNTAX_ERROR);
  }
  static override isInstance(error: unknown): error is SbplSyntaxError {
    return UxError.hasMarker(error, SBPL_SYNTAX_ERROR);
  }
  override toJSON() {
    return { ...super.toJSON(), line: this.line, offset: this.offset };
  }
}

/**
 * Reads SBPL text as S-expressions: lists, symbols, numbers, `"…"` strings (with `\\` escapes) and
 * `#"…"` regex literals (no escapes); `;` starts a comment. Throws `SbplSyntaxError` with the line.
 */
export function parseSbpl(text: string): SbplNode[] {
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new SbplSyntaxError(message, at, text.slice(0, at).split('\n').length);
  };

  const skip = () => {
    while (i < text.length) {
      const char = text[i]!;
      if (char === ';') {
        while (i < text.length && text[i] !== '\n') i += 1;
      } else if (/\s/.test(char)) i += 1;
      else return;
    }
  };

  const readString = (regex: boolean): SbplNode => {
    const start = i;
    i += regex ? 2 : 1;
    let value = '';
    while (i < text.length && text[i] !== '"') {
      if (!regex && text[i] === '\\') {
        if (i + 1 >= text.length) fail('unterminated string', start);
        value += text[i + 1];
        i += 2;
      } else {
        value += text[i];
        i += 1;
      }
    }
    if (i >= text.length) fail('unterminated string', start);
    i += 1;
    return { type: 'string', value, regex, offset: start };
  };

  const readNode = (): SbplNode => {
    skip();
    const start = i;
    const char = text[i];
    if (char === undefined) return fail('unexpected end of profile');
    if (char === '(') {
      i += 1;
      const items: SbplNode[] = [];
      for (;;) {
        skip();
        if (i >= text.length) fail('unclosed "("', start);
        if (text[i] === ')') {
          i += 1;
          return { type: 'list', items, offset: start };
        }
        items.push(readNode());
      }
    }
    if (char === ')') return fail('unexpected ")"');
    if (char === '"') return readString(false);
    if (char === '#' && text[i + 1] === '"') return readString(true);
    while (i < text.length && !/[\s()";]/.test(text[i]!)) i += 1;
    const atom = text.slice(start, i);
    return /^-?\d+$/.test(atom)
      ? { type: 'number', value: Number(atom), offset: start }
      : { type: 'symbol', value: atom, offset: start };
  };

  const nodes: SbplNode[] = [];
  for (skip(); i < text.length; skip()) nodes.push(readNode());
  return nodes;
}
