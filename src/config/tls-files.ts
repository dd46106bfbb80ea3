// The data bridge's TLS files (--tls-cert, --tls-key, --tls-client-ca), checked before anything
// listens: both halves or neither, each readable, and a certificate and key that make a usable pair.
// A listener given half of it would have served plain HTTP without a word; a missing or mismatched
// file failed deep inside the engine ("App construction failed") with a stack trace.

import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { BootError } from './boot-error.ts';

export interface TlsFiles { cert: string; key: string; ca?: string }

function readable(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new BootError(`tls: cannot read --${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** The TLS files from the flags, checked; undefined when neither --tls-cert nor --tls-key is set. */
export function tlsFilesOf(get: (flag: string) => string | undefined): TlsFiles | undefined {
  const cert = get('tls-cert');
  const key = get('tls-key');
  const ca = get('tls-client-ca');
  // A client CA alone is left to the auth settings: --auth mtls refuses to start without a serving
  // certificate, and says so in its own words.
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new BootError(`tls: --tls-cert and --tls-key go together; --${cert === undefined ? 'tls-key' : 'tls-cert'} is set without the other`);
  }
  const certPem = readable('tls-cert', cert);
  const keyPem = readable('tls-key', key);
  const caPem = ca !== undefined ? readable('tls-client-ca', ca) : undefined;
  try {
    createSecureContext({ cert: certPem, key: keyPem, ...(caPem ? { ca: caPem } : {}) });
  } catch (err) {
    throw new BootError(`tls: --tls-cert ${cert} and --tls-key ${key} are not a usable certificate and key: ${(err as Error).message}`);
  }
  return { cert, key, ...(ca !== undefined ? { ca } : {}) };
}
