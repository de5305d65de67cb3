import type { ReadStream, WriteStream } from 'node:tty';

/**
 * The person's terminal, shared by the approval prompt, the session prompt and attach. One `data`
 * listener hands input to whoever holds the terminal: a line reader (cooked mode, the kernel echoes
 * and edits) or a raw consumer (attach).
 */
/** How much others' output a question may hold back before it goes out anyway. */
const HELD_MAX_BYTES = 1024 * 1024;

export class Terminal {
  private lineBuffer = '';
  private lineWaiter: ((line: string | null) => void) | undefined;
  private rawConsumer: ((data: Buffer) => void) | undefined;
  /** Who held the keys before: released holders give them back to the one below. */
  private readonly rawStack: { consumer: (data: Buffer) => void }[] = [];
  /**
   * Questions waiting for a key, oldest first. They come before any raw consumer: an approval asked
   * while attached (a program the zsh fork intercepted) must get the answer, not the command.
   */
  private readonly keyReaders: ((data: Buffer) => void)[] = [];
  private readonly endListeners = new Set<() => void>();
  private ended = false;
  /** Open holds (`hold`), and what others wrote meanwhile. */
  private holds = 0;
  private held: (string | Uint8Array)[] = [];
  private heldBytes = 0;
  private readonly onData = (data: Buffer) => this.dispatch(data);
  private readonly onEnd = () => {
    this.ended = true;
    this.lineWaiter?.(null);
    this.lineWaiter = undefined;
    for (const listener of this.endListeners) listener();
  };

  constructor(
    readonly input: ReadStream,
    readonly output: WriteStream,
  ) {}

  write(text: string | Uint8Array): void {
    if (this.holds === 0) {
      this.output.write(text);
      return;
    }
    this.held.push(text);
    this.heldBytes += typeof text === 'string' ? text.length : text.byteLength;
    // A command printing a lot while a question waits must not pile up in memory: past 1 MiB the
    // held text goes out (after the question, which is on the screen already).
    if (this.heldBytes > HELD_MAX_BYTES) this.flushHeld();
  }

  /**
   * Keeps everyone else's output back until `release`, so a question, its prompt and its answer stay
   * together on the screen (a command's output and the door's notices follow them). The holder writes
   * through the returned `write`.
   */
  hold(): { write(text: string): void; release(): void } {
    this.holds += 1;
    let released = false;
    return {
      write: (text) => this.output.write(text),
      release: () => {
        if (released) return;
        released = true;
        this.holds -= 1;
        if (this.holds === 0) this.flushHeld();
      },
    };
  }

  private flushHeld(): void {
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const text of held) this.output.write(text);
  }

  /** Shows `prompt` and resolves with the next line (without its newline), or null at end of input. */
  readLine(prompt: string): Promise<string | null> {
    if (this.ended) return Promise.resolve(null);
    this.setRaw(false);
    this.write(prompt);
    const newline = this.lineBuffer.indexOf('\n');
    if (newline >= 0) {
      const line = this.lineBuffer.slice(0, newline);
      this.lineBuffer = this.lineBuffer.slice(newline + 1);
      return Promise.resolve(line.replace(/\r$/, ''));
    }
    return new Promise((resolve) => {
      this.lineWaiter = resolve;
      this.listen();
    });
  }

  /**
   * Sends every keystroke to `consumer` in raw mode until the returned function is called, which
   * gives the keys back to whoever had them before (an approval asked for during attach).
   */
  raw(consumer: (data: Buffer) => void): () => void {
    const holder = { consumer };
    this.rawStack.push(holder);
    this.rawConsumer = consumer;
    this.setRaw(true);
    this.listen();
    return () => {
      const at = this.rawStack.indexOf(holder);
      if (at < 0) return;
      this.rawStack.splice(at, 1);
      this.rawConsumer = this.rawStack.at(-1)?.consumer;
      if (this.rawConsumer || this.keyReaders.length > 0) return;
      this.setRaw(false);
      this.quiet();
    };
  }

  /**
   * Shows `prompt` and resolves with the next key pressed, without waiting for Enter (a single byte
   * or one escape sequence, as text), or null when the input ends or `signal` aborts.
   */
  readKey(prompt: string, signal?: AbortSignal): Promise<string | null> {
    if (this.ended || signal?.aborted) return Promise.resolve(null);
    this.output.write(prompt);
    return new Promise((resolve) => {
      const finish = (key: string | null) => {
        release();
        this.endListeners.delete(onEnd);
        signal?.removeEventListener('abort', onEnd);
        resolve(key);
      };
      const onEnd = () => finish(null);
      this.endListeners.add(onEnd);
      signal?.addEventListener('abort', onEnd, { once: true });
      const reader = (data: Buffer) => finish(data.toString('utf8'));
      const release = () => {
        const at = this.keyReaders.indexOf(reader);
        if (at >= 0) this.keyReaders.splice(at, 1);
        if (this.keyReaders.length > 0 || this.rawConsumer) return;
        this.setRaw(false);
        this.quiet();
      };
      this.keyReaders.push(reader);
      this.setRaw(true);
      this.listen();
    });
  }

  /** Lets the process exit: no listener keeps the input open. */
  close(): void {
    this.rawConsumer = undefined;
    this.rawStack.length = 0;
    this.keyReaders.length = 0;
    this.lineWaiter = undefined;
    this.setRaw(false);
    this.quiet();
  }

  private dispatch(data: Buffer): void {
    const reader = this.keyReaders[0];
    if (reader) {
      reader(data);
      return;
    }
    if (this.rawConsumer) {
      this.rawConsumer(data);
      return;
    }
    this.lineBuffer += data.toString('utf8');
    const newline = this.lineBuffer.indexOf('\n');
    if (newline < 0 || !this.lineWaiter) return;
    const line = this.lineBuffer.slice(0, newline).replace(/\r$/, '');
    this.lineBuffer = this.lineBuffer.slice(newline + 1);
    const waiter = this.lineWaiter;
    this.lineWaiter = undefined;
    this.quiet();
    waiter(line);
  }

  private listen(): void {
    if (this.input.listenerCount('data') === 0 || !this.input.listeners('data').includes(this.onData)) {
      this.input.on('data', this.onData);
      this.input.once('end', this.onEnd);
    }
    this.input.resume();
  }

  private quiet(): void {
    if (this.lineWaiter || this.rawConsumer || this.keyReaders.length > 0) return;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.pause();
  }

  private setRaw(raw: boolean): void {
    if (this.input.isTTY && this.input.isRaw !== raw) this.input.setRawMode(raw);
  }
}
