/**
 * A command's output shown before its first result arrives (`ux exec` shows it ahead of a per-exec
 * question, so the question comes after the lines the script printed before it), and what of that
 * result's output is still to be shown.
 */
export class OutputShownEarly {
  private shownBytes = 0;
  private shownText = '';

  /**
   * The part of `soFar` (everything the command printed so far) not shown yet, up to the last whole
   * UTF-8 character; the rest waits for the next call or the result.
   */
  next(soFar: Uint8Array | undefined): string {
    if (!soFar) return '';
    const end = utf8Boundary(soFar);
    if (end <= this.shownBytes) return '';
    const text = new TextDecoder().decode(soFar.subarray(this.shownBytes, end));
    this.shownBytes = end;
    this.shownText += text;
    return text;
  }

  /** Whether what was shown ends a line (or nothing was shown). */
  get atLineStart(): boolean {
    return this.shownText === '' || this.shownText.endsWith('\n');
  }

  /** What of the first result's `output` was not shown early (all of it, if it does not start so). */
  rest(output: string): string {
    if (this.shownText === '' || !output.startsWith(this.shownText)) return output;
    return output.slice(this.shownText.length);
  }
}

/** The length of the longest prefix of `bytes` that ends between two UTF-8 characters. */
export function utf8Boundary(bytes: Uint8Array): number {
  let i = bytes.length;
  let continuation = 0;
  while (i > 0 && continuation < 3 && ((bytes[i - 1] as number) & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  if (i === 0) return bytes.length;
  const lead = bytes[i - 1] as number;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return continuation + 1 >= length ? bytes.length : i - 1;
}

/**
 * Waits until `length()` (the bytes a command printed so far) stops growing for a moment, at most
 * about 100 ms: the lines a shell printed before it started a program may still be on their way from
 * the terminal when the question about that program arrives.
 */
export async function outputQuiet(length: () => number): Promise<void> {
  for (let i = 0, last = -1; i < 5; i++) {
    const now = length();
    if (now === last) return;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
