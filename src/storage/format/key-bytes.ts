// Key bytes live in the protocol leaf (src/protocol/key-bytes.ts), which is browser-safe and so
// types them as Uint8Array. Server code hands them to pg as bytea parameters and prints them as
// base64 or latin1, which needs the Buffer type: this is that view, over the same bytes (in Node the
// leaf's bytes already are a Buffer, so nothing is copied).

import { keyToBytes as keyToUint8Array } from '../../protocol/key-bytes.ts';

export { keyFromBytes, keyIsText, showRawBytes } from '../../protocol/key-bytes.ts';

/** The bytes a key names, as a Buffer (the inverse of keyFromBytes). */
export function keyToBytes(key: string): Buffer {
  const b = keyToUint8Array(key);
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}
