/** One sandbox violation from the macOS unified log. */
export interface SeatbeltViolation {
  /** Process name as the kernel logged it. */
  process: string;
  pid: number;
  /** The denied operation (`file-read-data`, `network-outbound`, …). */
  operation: string;
  /** What it was denied on (a path, an address, a service); may be empty. */
  target: string;
  /** The collector tag the violating profile carried, when it had one. */
  tag?: string;
}

const VIOLATION = /^Sandbox:\s*(.+?)\((\d+)\)\s+deny\(\d+\)\s+(\S+)\s*(.*)$/;
const TAG = /\s*\b(ux-sbx-[0-9a-f]+-\d+)\b\s*/;

/** Parses a kernel line `Sandbox: <process>(<pid>) deny(<n>) <operation> <target>`; undefined for any other line. */
export function parseSeatbeltViolation(message: string): SeatbeltViolation | undefined {
  const match = VIOLATION.exec(message.trim());
  if (!match) return undefined;
  let target = match[4]!;
  const tag = TAG.exec(target);
  if (tag) target = `${target.slice(0, tag.index)} ${target.slice(tag.index + tag[0].length)}`.trim();
  return {
    process: match[1]!,
    pid: Number(match[2]),
    operation: match[3]!,
    target,
    ...(tag ? { tag: tag[1]! } : {}),
  };
}

/** A block to append to a command's output, like Codex's: `=== Sandbox denials ===` then `(cat) file-read-data /x`. */
export function formatSeatbeltViolations(violations: readonly SeatbeltViolation[], maxChars = 1000): string {
  if (violations.length === 0) return '';
  const seen = new Set<string>();
  let text = '\n=== Sandbox denials ===\n';
  for (const violation of violations) {
    const line = `(${violation.process}) ${violation.operation}${violation.target ? ` ${violation.target}` : ''}\n`;
    if (seen.has(line)) continue;
    seen.add(line);
    if (text.length + line.length > maxChars) {
      text += '…\n';
      break;
    }
    text += line;
  }
  return text;
}
