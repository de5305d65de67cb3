/**
 * A connection to an exec-server that carries whole messages (one JSON text each): a child process's
 * stdio, split into lines, or a WebSocket, one text frame per message.
 */
export interface ExecServerTransport {
  /** Says which server this is, for error messages (`node server.js`, `ws://127.0.0.1:4500`). */
  readonly description: string;
  /** Sends one message. Messages sent after the transport closed are dropped. */
  send(message: string): void;
  /** The receiver of incoming messages; messages that arrived before it was set are delivered to it. */
  onMessage(listener: (message: string) => void): void;
  /** Called once when the connection ends (at once if it already has), with the reason. */
  onClose(listener: (reason: string) => void): void;
  /** Ends the connection; resolves once it is gone (for a child process, once it exited). */
  close(): Promise<void>;
}

/** The listener plumbing every transport shares: queue until listened to, close exactly once. */
export class TransportEvents {
  private messageListener: ((message: string) => void) | undefined;
  private readonly queued: string[] = [];
  private closeListeners: ((reason: string) => void)[] = [];
  private closeReason: string | undefined;

  get closed(): boolean {
    return this.closeReason !== undefined;
  }

  message(text: string): void {
    if (this.closed) return;
    if (this.messageListener) this.messageListener(text);
    else this.queued.push(text);
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closeReason = reason;
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const listener of listeners) listener(reason);
  }

  onMessage(listener: (message: string) => void): void {
    this.messageListener = listener;
    for (const text of this.queued.splice(0)) listener(text);
  }

  onClose(listener: (reason: string) => void): void {
    if (this.closeReason !== undefined) listener(this.closeReason);
    else this.closeListeners.push(listener);
  }
}
