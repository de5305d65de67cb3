import type { OutputStream } from '@ux/protocol';

/**
 * `{"method":"process/output","params":{processId, seq, stream, chunk}}` as bytes, built without
 * `JSON.stringify` over the chunk: base64 needs no escaping, and copying it as Latin-1 into the buffer
 * avoids a UTF-8 conversion of the largest part of every message.
 */
export function encodeOutputNotification(
  processId: string,
  seq: number,
  stream: OutputStream,
  data: Uint8Array,
): Buffer {
  const head = Buffer.from(
    `{"method":"process/output","params":{"processId":${JSON.stringify(processId)},"seq":${seq},"stream":"${stream}","chunk":"`,
    'utf8',
  );
  const chunk = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  const message = Buffer.allocUnsafe(head.length + chunk.length + 3);
  head.copy(message, 0);
  message.write(chunk, head.length, 'latin1');
  message.write('"}}', head.length + chunk.length, 'latin1');
  return message;
}
