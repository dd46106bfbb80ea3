// Buckets and streams: ls, create, delete, config get|set. An address without a key names a bucket,
// with one a stream: `svc create svc://orders` makes a bucket, `svc create svc://orders/eu` a stream.

import {
  BUCKET_CONFIG_FIELDS, STREAM_CONFIG_FIELDS, formatAddress, parseAddress, type BucketConfig, type StreamConfig, type StreamInfo,
} from '../../../client/index.ts';
import { UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';

type Value = string | number | boolean;

/** `field=value` pairs, checked against the resource's fields; numbers and booleans typed. */
export function parseAssignments(pairs: readonly string[], fields: readonly string[], what: string): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`expected field=value, got ${JSON.stringify(p)}`);
    const name = p.slice(0, eq);
    const raw = p.slice(eq + 1);
    if (!fields.includes(name)) throw new UsageError(`${name} is not a ${what} config field; fields: ${fields.join(', ')}`);
    out[name] = raw === 'true' ? true : raw === 'false' ? false : /^\d+$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

function pick<T extends object>(o: T, fields: readonly (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const f of fields) out[f] = o[f];
  return out;
}

async function printConfig(ctx: Context, config: Record<string, unknown>): Promise<void> {
  if (ctx.json) await ctx.out.line(JSON.stringify(config));
  else for (const [k, v] of Object.entries(config)) await ctx.out.line(`${k}=${String(v)}`);
}

const streamAddr = (s: StreamInfo): string => formatAddress({ bucket: s.bucket, key: s.key });
/** A stream as --json prints it: the spec's fields (`key` the key itself when it is text), plus
 *  its `address` (svc://BUCKET/KEY), as ls does. */
const streamJson = (s: StreamInfo): Record<string, unknown> => ({ ...s, key: typeof s.key === 'string' ? s.key : undefined, address: streamAddr(s) });

export const ls: Command = {
  name: 'ls',
  usage: '[svc://BUCKET]',
  summary: 'list buckets, or the streams of a bucket',
  details: 'Prints one svc:// address per line (every page is fetched); --json prints each resource as JSON.',
  flags: [{ name: 'limit', value: 'N', help: 'stop after N entries' }],
  async run(ctx) {
    const [text] = ctx.args.expect(0, 1, 'at most one address: svc://BUCKET');
    const limit = ctx.args.int('limit') ?? Number.POSITIVE_INFINITY;
    const c = ctx.client();
    let n = 0;
    if (text === undefined) {
      for await (const b of c.buckets()) {
        if (n++ >= limit) break;
        await ctx.out.line(ctx.json ? JSON.stringify(b) : formatAddress({ bucket: b.name }));
      }
      return;
    }
    const a = parseAddress(text);
    if (a.key !== undefined) throw new UsageError('ls lists a bucket: svc://BUCKET (for a stream, use config get or check-tail)');
    for await (const s of c.streams(a)) {
      if (n++ >= limit) break;
      await ctx.out.line(ctx.json ? JSON.stringify(streamJson(s)) : streamAddr(s));
    }
  },
};

export const create: Command = {
  name: 'create',
  usage: 'svc://BUCKET[/KEY] [FIELD=VALUE ...]',
  summary: 'create a bucket, or a stream, with optional config fields',
  details: [
    'Bucket fields: ' + BUCKET_CONFIG_FIELDS.join(', ') + '.',
    'Stream fields: ' + STREAM_CONFIG_FIELDS.join(', ') + '.',
    'Unset fields take the defaults (a stream: its bucket\'s). Example: svc create svc://orders create_stream_on_append=true',
  ].join('\n'),
  flags: [{ name: 'creation-token', value: 'TOKEN', help: 'a retry with the same token converges on the first create (default: generated)' }],
  async run(ctx) {
    const [text, ...pairs] = ctx.args.expect(1, Number.POSITIVE_INFINITY, 'an address: svc://BUCKET or svc://BUCKET/KEY');
    const a = parseAddress(text);
    const token = ctx.args.str('creation-token');
    const opts = token !== undefined ? { creationToken: token } : {};
    const c = ctx.client();
    if (a.key === undefined) {
      const b = await c.createBucket(a, parseAssignments(pairs, BUCKET_CONFIG_FIELDS, 'bucket') as Partial<BucketConfig>, opts);
      await ctx.out.line(ctx.json ? JSON.stringify(b) : `created ${formatAddress(a)}`);
    } else {
      const s = await c.createStream({ bucket: a.bucket, key: a.key }, parseAssignments(pairs, STREAM_CONFIG_FIELDS, 'stream') as Partial<StreamConfig>, opts);
      await ctx.out.line(ctx.json ? JSON.stringify(streamJson(s)) : `created ${formatAddress(a)}`);
    }
  },
};

export const del: Command = {
  name: 'delete',
  usage: 'svc://BUCKET[/KEY]',
  summary: 'delete a stream, or an empty bucket',
  flags: [],
  async run(ctx) {
    const [text] = ctx.args.expect(1, 1, 'one address: svc://BUCKET or svc://BUCKET/KEY');
    const a = parseAddress(text);
    const c = ctx.client();
    if (a.key === undefined) await c.deleteBucket(a);
    else await c.deleteStream({ bucket: a.bucket, key: a.key });
    await ctx.out.line(ctx.json ? JSON.stringify({ deleted: formatAddress(a) }) : `deleted ${formatAddress(a)}`);
  },
};

export const configGet: Command = {
  name: 'config get',
  usage: 'svc://BUCKET[/KEY]',
  summary: 'print a bucket\'s or a stream\'s config',
  details: 'Prints FIELD=VALUE lines (--json: one object with every field of the resource).',
  flags: [],
  async run(ctx) {
    const [text] = ctx.args.expect(1, 1, 'one address: svc://BUCKET or svc://BUCKET/KEY');
    const a = parseAddress(text);
    const c = ctx.client();
    if (a.key === undefined) {
      const b = await c.getBucket(a);
      await printConfig(ctx, ctx.json ? { ...b } : pick(b, BUCKET_CONFIG_FIELDS));
    } else {
      const s = await c.getStream({ bucket: a.bucket, key: a.key });
      await printConfig(ctx, ctx.json ? streamJson(s) : { ...pick(s, STREAM_CONFIG_FIELDS), fencing_token: s.fencing_token });
    }
  },
};

export const configSet: Command = {
  name: 'config set',
  usage: 'svc://BUCKET[/KEY] FIELD=VALUE ...',
  summary: 'change config fields of a bucket or a stream',
  details: [
    'A stream changes only the given fields (PATCH). A bucket\'s config is replaced whole by the server,',
    'so the current config is read, the given fields changed, and the whole written back; the change',
    'reaches only streams created afterwards.',
  ].join('\n'),
  flags: [],
  async run(ctx) {
    const [text, ...pairs] = ctx.args.expect(2, Number.POSITIVE_INFINITY, 'an address and at least one FIELD=VALUE');
    const a = parseAddress(text);
    const c = ctx.client();
    if (a.key === undefined) {
      const changes = parseAssignments(pairs, BUCKET_CONFIG_FIELDS, 'bucket');
      const current = await c.getBucket(a);
      const b = await c.updateBucket(a, { ...pick(current, BUCKET_CONFIG_FIELDS), ...changes } as Partial<BucketConfig>);
      await printConfig(ctx, ctx.json ? { ...b } : pick(b, BUCKET_CONFIG_FIELDS));
    } else {
      const changes = parseAssignments(pairs, STREAM_CONFIG_FIELDS, 'stream');
      const s = await c.reconfigureStream({ bucket: a.bucket, key: a.key }, changes as Partial<StreamConfig>);
      await printConfig(ctx, ctx.json ? streamJson(s) : pick(s, STREAM_CONFIG_FIELDS));
    }
  },
};
