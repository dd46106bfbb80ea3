// The `s3` object store: settled segments as objects in an S3 bucket (AWS S3, or any S3-protocol
// server: MinIO, s3rver in the tests), through @aws-sdk/client-s3. A PUT is durable once S3 answers
// 200, and an object appears whole or not at all, so no temp-and-rename is needed. Credentials come
// from the SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance
// role). ReadPlan's presigned mode signs GETs with the same credentials (SigV4 query signing).

import type { S3Client } from '@aws-sdk/client-s3';
import { S3_ATTEMPTS_MAX, S3_BOOT_RETRY_MS, S3_REQUEST_MS_MAX } from '../../config/limits.ts';
import { DELETE_MANY_KEYS_MAX, type ByteRange, type CallBound, type ObjectStore, type S3ObjectStoreConfig } from './object-store.ts';
import { BootError, waitAtBoot } from '../../config/boot-error.ts';

/** The SDK's send options for a call's bound in all: its attempts and their backoff end with it. */
function sendOptions(bound: CallBound | undefined): { abortSignal?: AbortSignal } {
  return bound ? { abortSignal: AbortSignal.timeout(bound.deadlineMs) } : {};
}

/** An error the way the fs store reports a missing object, so readers treat both alike. */
function missing(key: string): Error {
  return Object.assign(new Error(`object ${key} not found`), { code: 'ENOENT' });
}

/** The SDK, loaded when the first S3 store is made: a star on the fs store (the embedded default)
 *  and each of its piscina workers start without it (about 0.25 s of CPU apiece here). */
interface Sdk { s3: typeof import('@aws-sdk/client-s3'); presigner: typeof import('@aws-sdk/s3-request-presigner') }
let sdkLoading: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  sdkLoading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([s3, presigner]) => ({ s3, presigner }));
  return sdkLoading;
}

function isMissing({ s3 }: Sdk, err: unknown): boolean {
  return err instanceof s3.NoSuchKey || (err instanceof s3.S3ServiceException && (err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404));
}

interface Loaded { sdk: Sdk; client: S3Client }

export class S3ObjectStore implements ObjectStore {
  /** The SDK and this store's client, once loaded; every call awaits it (one microtask after). */
  private readonly ready: Promise<Loaded>;

  constructor(private readonly cfg: S3ObjectStoreConfig) {
    this.ready = loadSdk().then((sdk) => {
      const client = new sdk.s3.S3Client({
        region: cfg.region,
        ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
        forcePathStyle: cfg.forcePathStyle,
        maxAttempts: S3_ATTEMPTS_MAX,
        // Without throwOnRequestTimeout the SDK's request timeout only logs a warning, and a request to
        // an S3 that accepted it and went silent (stopped, wedged, black-holed) waits forever: a
        // cluster star's acks wait on it, with nothing logged and /readyz 200 (chaos audit F7).
        requestHandler: { requestTimeout: cfg.requestMsMax ?? S3_REQUEST_MS_MAX, connectionTimeout: cfg.requestMsMax ?? S3_REQUEST_MS_MAX, throwOnRequestTimeout: true },
      });
      return { sdk, client };
    });
    this.ready.catch(() => undefined); // a failed load is each call's error, not an unhandled one
  }

  /** Fails unless the bucket answers with these credentials: a misconfigured store refuses the
   *  star's start rather than its first settle. An S3 that answers no (403, 404: credentials, the
   *  bucket's name) fails at once; one that does not answer, or fails on its side (5xx), is asked again
   *  every S3_BOOT_RETRY_MS for up to `waitMs` (`onWait` told the first time), so a star restarted
   *  during a short S3 outage comes up once it is back rather than exiting. */
  async check(waitMs = 0, onWait?: (why: string) => void): Promise<void> {
    const { sdk, client } = await this.ready;
    const statusOf = (err: unknown): number | undefined => err instanceof sdk.s3.S3ServiceException ? err.$metadata.httpStatusCode : undefined;
    const why = (err: unknown): string => {
      const code = statusOf(err);
      return `objects: s3 bucket ${this.cfg.bucket} at ${this.cfg.endpoint || 'AWS'} did not answer: ${(err as Error).name}${code === undefined ? '' : ` (HTTP ${code})`}`;
    };
    try {
      await waitAtBoot(
        () => client.send(new sdk.s3.HeadBucketCommand({ Bucket: this.cfg.bucket })),
        (err) => (statusOf(err) ?? 500) >= 500,
        { waitMs, retryMs: S3_BOOT_RETRY_MS },
        (err) => onWait?.(why(err)));
    } catch (err) {
      throw new BootError(why(err));
    }
  }

  /** The bucket's object key for a store key. */
  objectKey(key: string): string { return `${this.cfg.prefix}${key}`; }

  get bucket(): string { return this.cfg.bucket; }

  async put(key: string, body: Uint8Array, bound?: CallBound): Promise<void> {
    const { sdk, client } = await this.ready;
    await client.send(new sdk.s3.PutObjectCommand({ Bucket: this.cfg.bucket, Key: this.objectKey(key), Body: body, ContentLength: body.length }), sendOptions(bound));
  }

  async get(key: string, range?: ByteRange, bound?: CallBound): Promise<Buffer> {
    if (range && range.length === 0) return Buffer.alloc(0);
    const { sdk, client } = await this.ready;
    try {
      const res = await client.send(new sdk.s3.GetObjectCommand({
        Bucket: this.cfg.bucket,
        Key: this.objectKey(key),
        ...(range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {}),
      }), sendOptions(bound));
      if (!res.Body) return Buffer.alloc(0);
      const bytes = await res.Body.transformToByteArray();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    } catch (err) {
      if (isMissing(sdk, err)) throw missing(key);
      throw err;
    }
  }

  /** ListObjects (v1) paged by Marker: its truncated pages need no continuation token, which
   *  s3rver cannot make on Node 20 (it ciphers them with DES, which OpenSSL 3 refuses), so a v2
   *  listing of more than one page failed there. Every S3-protocol server serves v1. */
  async list(prefix: string, limit = Infinity): Promise<string[]> {
    const { sdk, client } = await this.ready;
    const out: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = await client.send(new sdk.s3.ListObjectsCommand({
        Bucket: this.cfg.bucket, Prefix: this.objectKey(prefix), ...(marker ? { Marker: marker } : {}),
        ...(Number.isFinite(limit) ? { MaxKeys: Math.min(limit - out.length, 1000) } : {}),
      }));
      const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => k !== undefined);
      for (const k of keys) if (out.length < limit) out.push(k.slice(this.cfg.prefix.length));
      if (!page.IsTruncated || keys.length === 0 || out.length >= limit) break;
      marker = keys[keys.length - 1];
    }
    return out.sort();
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.ready;
    await client.send(new sdk.s3.DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: this.objectKey(key) }));
  }

  /** DeleteObjects, quiet: the answer lists only the keys that failed. A request that fails as a
   *  whole ends the call with what the earlier ones deleted. */
  async deleteMany(keys: readonly string[]): Promise<string[]> {
    const { sdk, client } = await this.ready;
    const deleted: string[] = [];
    for (let at = 0; at < keys.length; at += DELETE_MANY_KEYS_MAX) {
      const part = keys.slice(at, at + DELETE_MANY_KEYS_MAX);
      let failed: Set<string | undefined>;
      try {
        const res = await client.send(new sdk.s3.DeleteObjectsCommand({
          Bucket: this.cfg.bucket, Delete: { Objects: part.map((k) => ({ Key: this.objectKey(k) })), Quiet: true },
        }));
        failed = new Set((res.Errors ?? []).map((e) => e.Key));
      } catch {
        break;
      }
      for (const k of part) if (!failed.has(this.objectKey(k))) deleted.push(k);
    }
    return deleted;
  }

  /** A URL that GETs the object (the caller adds its own Range) until `expiresAtMs`. */
  async presignGet(key: string, expiresAtMs: number, nowMs: number): Promise<string> {
    const expiresIn = Math.max(1, Math.ceil((expiresAtMs - nowMs) / 1000));
    const { sdk, client } = await this.ready;
    return sdk.presigner.getSignedUrl(client, new sdk.s3.GetObjectCommand({ Bucket: this.cfg.bucket, Key: this.objectKey(key) }), { expiresIn });
  }

  close(): void {
    void this.ready.then(({ client }) => client.destroy(), () => undefined);
  }
}
