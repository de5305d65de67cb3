import type { UxEvent } from '@ux/protocol';

export interface Receipt {
  chunkId?: string;
  wallTime: number;
  exitCode?: number;
  sessionId?: number;
  /** The `Process is waiting for input` line. */
  waitingForInput?: true;
  /** The `Sandbox level:` line (a sandboxed command's start). */
  level?: string;
  /** The `Sandbox:` lines. */
  sandbox?: string[];
  /** The `Sandbox denied:` line. */
  denied?: string;
  /** The `Next step:` line. */
  nextStep?: string;
  originalTokenCount?: number;
  output: string;
}

/** Reads the receipt text (docs/reference/door.md §7) back into fields, strictly: any other shape fails. */
export function parseReceipt(text: string): Receipt {
  const match =
    /^(?:Chunk ID: ([0-9a-f]{6})\n)?Wall time: (\d+\.\d{4}) seconds\n(?:Process exited with code (-?\d+)\n)?(?:Process running with session ID (\d+)\n)?(Process is waiting for input\n)?(?:Sandbox level: (.*)\n)?((?:Sandbox: .*\n)*)(?:Sandbox denied: (.*)\n)?(?:Next step: (.*)\n)?(?:Original token count: (\d+)\n)?Output:\n([\s\S]*)$/.exec(
      text,
    );
  if (!match) throw new Error(`not a receipt:\n${text}`);
  return {
    ...(match[1] ? { chunkId: match[1] } : {}),
    wallTime: Number(match[2]),
    ...(match[3] ? { exitCode: Number(match[3]) } : {}),
    ...(match[4] ? { sessionId: Number(match[4]) } : {}),
    ...(match[5] ? { waitingForInput: true } : {}),
    ...(match[6] ? { level: match[6] } : {}),
    ...(match[7]
      ? {
          sandbox: match[7]
            .trimEnd()
            .split('\n')
            .map((line) => line.slice('Sandbox: '.length)),
        }
      : {}),
    ...(match[8] ? { denied: match[8] } : {}),
    ...(match[9] ? { nextStep: match[9] } : {}),
    ...(match[10] ? { originalTokenCount: Number(match[10]) } : {}),
    output: match[11]!,
  };
}

export function ofType<T extends UxEvent['type']>(
  events: UxEvent[],
  type: T,
): Extract<UxEvent, { type: T }>[] {
  return events.filter((event): event is Extract<UxEvent, { type: T }> => event.type === type);
}

export function deltaText(events: UxEvent[], callId?: string): string {
  return Buffer.concat(
    ofType(events, 'exec_command_output_delta')
      .filter((event) => callId === undefined || event.call_id === callId)
      .map((event) => Buffer.from(event.chunk)),
  ).toString('utf8');
}
