import { ApplyPatchError } from './apply-patch-error.js';

/** One line of a hunk: ' ' context, '-' removed, '+' added; `text` is without the sign. */
export interface PatchLine {
  sign: ' ' | '-' | '+';
  text: string;
}

/** One `@@` section of an Update File operation. */
export interface PatchHunk {
  /** `@@ header` lines, searched in order before the old lines (empty for a bare `@@`). */
  anchors: string[];
  /** The hunk's lines in order. */
  lines: PatchLine[];
  /** Context and `-` lines: what must be found in the file. */
  oldLines: string[];
  /** Context and `+` lines: what replaces them. */
  newLines: string[];
  /** `*** End of File` followed the hunk: the old lines sit at the end of the file. */
  endOfFile: boolean;
  added: number;
  removed: number;
  /** 1-based line of the hunk's first line in the patch text. */
  line: number;
}

export type PatchOperation =
  | { kind: 'add'; path: string; contents: string; line: number }
  | { kind: 'delete'; path: string; line: number }
  | { kind: 'update'; path: string; moveTo?: string; hunks: PatchHunk[]; line: number };

export interface ParsedPatch {
  /** The patch text without a heredoc wrapper, from `*** Begin Patch` to `*** End Patch`. */
  text: string;
  operations: PatchOperation[];
}

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File:';
const DELETE = '*** Delete File:';
const UPDATE = '*** Update File:';
const MOVE = '*** Move to:';
const END_OF_FILE = '*** End of File';
const VALID_HEADERS =
  "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'";
// `apply_patch <<'EOF'` lines that some models put inside the patch argument itself.
const HEREDOC_START = /^<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_.-]*)\1$/;
// A unified-diff range header (`@@ -12,7 +12,8 @@ fn main`): its numbers mean nothing here.
const UNIFIED_RANGE = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$/;

/**
 * Parses the apply_patch format. Lenient where Codex is: whitespace around the envelope and file
 * markers, a `<<'EOF'` … `EOF` heredoc wrapper around the whole patch, CRLF line ends, blank lines
 * between hunks. Throws an `ApplyPatchError` that names the line and what was expected.
 */
export function parsePatch(text: string): ParsedPatch {
  const trimmed = text.trim();
  const leadingNewlines = countNewlines(text.slice(0, text.length - text.trimStart().length));
  const lines = trimmed.split(/\r?\n/);
  const envelope = checkEnvelope(lines, leadingNewlines + 1);
  return new PatchParser(envelope.lines, envelope.firstLine).parse();
}

interface Envelope {
  /** Lines from `*** Begin Patch` to `*** End Patch`, both included. */
  lines: string[];
  /** Patch line number of `*** Begin Patch`. */
  firstLine: number;
}

function checkEnvelope(lines: string[], firstLine: number): Envelope {
  const problem = envelopeProblem(lines, firstLine);
  if (problem === undefined) return { lines, firstLine };
  const heredoc = HEREDOC_START.exec(lines[0]?.trim() ?? '');
  const delimiter = heredoc?.[2];
  if (delimiter !== undefined && lines.length >= 4 && lines[lines.length - 1]?.trim() === delimiter) {
    const inner = lines.slice(1, -1);
    const innerProblem = envelopeProblem(inner, firstLine + 1);
    if (innerProblem === undefined) return { lines: inner, firstLine: firstLine + 1 };
    throw innerProblem;
  }
  throw problem;
}

function envelopeProblem(lines: string[], firstLine: number): ApplyPatchError | undefined {
  if (lines[0]?.trim() !== BEGIN) {
    return new ApplyPatchError({
      reason: 'invalid_patch',
      detail: `The first line of the patch must be '${BEGIN}'`,
      line: firstLine,
    });
  }
  if (lines.length < 2 || lines[lines.length - 1]?.trim() !== END) {
    return new ApplyPatchError({
      reason: 'invalid_patch',
      detail: `The last line of the patch must be '${END}'`,
      line: firstLine + lines.length - 1,
    });
  }
  return undefined;
}

class PatchParser {
  private index = 1;
  private readonly end: number;

  constructor(
    private readonly lines: string[],
    private readonly firstLine: number,
  ) {
    this.end = lines.length - 1;
  }

  parse(): ParsedPatch {
    const operations: PatchOperation[] = [];
    while (this.index < this.end) {
      const raw = this.current();
      const marker = raw.trim();
      if (marker === '') {
        this.index++;
        continue;
      }
      const line = this.lineNumber();
      if (marker.startsWith(ADD)) {
        const path = this.path(marker, ADD);
        this.index++;
        let contents = '';
        while (this.index < this.end && this.current().startsWith('+')) {
          contents += `${this.current().slice(1)}\n`;
          this.index++;
        }
        operations.push({ kind: 'add', path, contents, line });
      } else if (marker.startsWith(DELETE)) {
        operations.push({ kind: 'delete', path: this.path(marker, DELETE), line });
        this.index++;
      } else if (marker.startsWith(UPDATE)) {
        operations.push(this.update(marker, line));
      } else {
        const previous = operations[operations.length - 1];
        if (previous?.kind === 'add' && raw.startsWith('+')) {
          throw this.hunkError(
            `a blank line interrupts the added file '${previous.path}'; write an empty line of the file as '+'`,
            line - 1,
          );
        }
        const hint = previous?.kind === 'add' ? " (every line of an added file starts with '+')" : '';
        throw this.hunkError(`'${marker}' is not a valid hunk header${hint}. ${VALID_HEADERS}`, line);
      }
    }
    return { text: this.lines.join('\n'), operations };
  }

  private update(marker: string, line: number): PatchOperation {
    const path = this.path(marker, UPDATE);
    this.index++;
    let moveTo: string | undefined;
    const next = this.index < this.end ? this.current().trim() : '';
    if (next.startsWith(MOVE)) {
      moveTo = this.path(next, MOVE);
      this.index++;
    }
    const hunks: PatchHunk[] = [];
    while (this.index < this.end) {
      const raw = this.current();
      // Blank lines between hunks are separators; a line starting with '*' begins the next operation.
      if (raw.trim() === '') {
        this.index++;
        continue;
      }
      if (raw.startsWith('*')) break;
      hunks.push(this.hunk(hunks.length === 0));
    }
    if (hunks.length === 0) throw this.hunkError(`Update file hunk for path '${path}' is empty`, line);
    return moveTo === undefined
      ? { kind: 'update', path, hunks, line }
      : { kind: 'update', path, moveTo, hunks, line };
  }

  private hunk(first: boolean): PatchHunk {
    const line = this.lineNumber();
    const anchors: string[] = [];
    let sawMarker = false;
    // Several `@@` lines in a row narrow the search step by step (class, then method).
    while (this.index < this.end) {
      const anchor = parseAnchor(this.current());
      if (anchor === undefined) break;
      sawMarker = true;
      if (anchor !== '') anchors.push(anchor);
      this.index++;
    }
    if (!sawMarker && !first) {
      throw this.hunkError(
        `expected a line starting with ' ', '+' or '-' (or '@@' to start another hunk), got '${this.current()}'`,
        this.lineNumber(),
      );
    }
    const lines: PatchLine[] = [];
    let endOfFile = false;
    let trailingBlank = 0;
    while (this.index < this.end) {
      const raw = this.current();
      if (raw.trimEnd() === END_OF_FILE) {
        if (lines.length === 0) break;
        endOfFile = true;
        this.index++;
        break;
      }
      const sign = raw[0];
      if (raw === '') {
        // An empty line in a hunk is an empty context line (models drop the leading space).
        lines.push({ sign: ' ', text: '' });
      } else if (sign === ' ' || sign === '+' || sign === '-') {
        lines.push({ sign, text: raw.slice(1) });
      } else if (lines.length === 0 && !raw.startsWith('*') && parseAnchor(raw) === undefined) {
        throw this.hunkError(
          `expected a line starting with ' ', '+' or '-', got '${raw}'`,
          this.lineNumber(),
        );
      } else {
        break;
      }
      trailingBlank = raw === '' ? trailingBlank + 1 : 0;
      this.index++;
    }
    // Empty lines before the next hunk or file are separators, not context.
    if (!endOfFile) lines.splice(lines.length - trailingBlank, trailingBlank);
    if (lines.length === 0) {
      throw this.hunkError(
        "the hunk has no lines: add ' ' (context), '-' (removed) or '+' (added) lines after '@@'",
        sawMarker ? line : this.lineNumber(),
      );
    }
    return makeHunk(anchors, lines, endOfFile, line);
  }

  private path(marker: string, prefix: string): string {
    const path = marker.slice(prefix.length).trim();
    const line = this.lineNumber();
    const fail = (detail: string) => new ApplyPatchError({ reason: 'invalid_path', detail, line, path });
    if (path === '') throw fail(`missing path after '${prefix}'`);
    if (path.includes('\0')) throw fail(`the path contains a NUL byte`);
    if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:[\\/]/.test(path)) {
      throw fail(`'${path}' is absolute; file references must be relative to the working directory`);
    }
    if (path === '~' || path.startsWith('~/')) {
      throw fail(
        `'${path}' starts with '~', which is not expanded; use a path relative to the working directory`,
      );
    }
    return path;
  }

  private current(): string {
    return this.lines[this.index] ?? '';
  }

  private lineNumber(): number {
    return this.firstLine + this.index;
  }

  private hunkError(detail: string, line: number): ApplyPatchError {
    return new ApplyPatchError({ reason: 'invalid_hunk', detail, line });
  }
}

/** Builds a hunk from its lines, deriving the old and new sides and the counts. */
export function makeHunk(anchors: string[], lines: PatchLine[], endOfFile: boolean, line: number): PatchHunk {
  return {
    anchors,
    lines,
    oldLines: lines.filter((entry) => entry.sign !== '+').map((entry) => entry.text),
    newLines: lines.filter((entry) => entry.sign !== '-').map((entry) => entry.text),
    endOfFile,
    added: lines.filter((entry) => entry.sign === '+').length,
    removed: lines.filter((entry) => entry.sign === '-').length,
    line,
  };
}

/** `@@` → '' (no anchor), `@@ text` → 'text', anything else → undefined. */
function parseAnchor(raw: string): string | undefined {
  const line = raw.trimEnd();
  if (line === '@@') return '';
  if (!line.startsWith('@@ ')) return undefined;
  const range = UNIFIED_RANGE.exec(line);
  if (range) return range[1]?.trim() ?? '';
  return line.slice(3);
}

function countNewlines(text: string): number {
  let count = 0;
  for (const char of text) if (char === '\n') count++;
  return count;
}
