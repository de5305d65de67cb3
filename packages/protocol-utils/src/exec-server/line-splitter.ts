/**
 * Splits a byte stream into `\n`-terminated lines (a `\r` before the `\n` is dropped). A line longer
 * than `maxBytes` is never buffered whole: it is reported once as oversized and skipped to its end.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversized: () => void,
  ) {}

  push(data: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = data.indexOf(0x0a, start);
      if (newline === -1) {
        this.append(data.subarray(start));
        return;
      }
      this.append(data.subarray(start, newline));
      this.finishLine();
      start = newline + 1;
    }
  }

  private append(part: Buffer): void {
    if (this.skipping || part.length === 0) return;
    if (this.size + part.length > this.maxBytes) {
      this.parts = [];
      this.size = 0;
      this.skipping = true;
      this.onOversized();
      return;
    }
    this.parts.push(part);
    this.size += part.length;
  }

  private finishLine(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    let line = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)).toString('utf8');
    this.parts = [];
    this.size = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.onLine(line);
  }
}
