// Records: append (stdin or files), read, tail (-f follows through restarts), check-tail, trim, fence.

import { accessSync, constants as fsConstants, createReadStream } from 'node:fs';
import {
  SvcError, formatAddress, parseStreamAddress, type AppendRecord, type Producer, type ReadRecord, type ReadStart, type StreamAddress, type Ticket,
} from '../../../client/index.ts';
import { recordBytes } from '../../../client/http/records.ts';
import { UsageError, type FlagSpec } from '../args.ts';
import type { Command } from '../command.ts';
import type { Context } from '../context.ts';
import { FORMATS, InputError, lines, parseFormat, recordFromLine, recordToOutput, type Format } from '../format.ts';
import { INTERRUPTED, INTERRUPT_FLUSH_MS_MAX, Interrupt } from '../interrupt.ts';
import { describeFailure } from '../exit.ts';
import { Progress } from '../progress.ts';
import { PRODUCER_FLAGS, producerOptionsOf } from '../producer-flags.ts';
import { parseTimeMs } from '../time.ts';

const FORMAT_FLAG: FlagSpec = { name: 'format', value: FORMATS.join('|'), help: 'record format (default text: one record per line)' };

function streamArg(ctx: Context, extra = 0): { addr: StreamAddress; rest: readonly string[] } {
  const [text, ...rest] = ctx.args.expect(1, 1 + extra, extra > 0 ? 'a stream address svc://BUCKET/KEY and its arguments' : 'one stream address: svc://BUCKET/KEY');
  return { addr: parseStreamAddress(text), rest };
}

async function printRecords(ctx: Context, records: AsyncIterable<ReadRecord>, format: Format): Promise<number> {
  let n = 0;
  for await (const r of records) {
    await ctx.out.write(recordToOutput(r, format));
    n++;
  }
  await ctx.out.flush();
  return n;
}

// ------------------------------------------------------------------ append

export const append: Command = {
  name: 'append',
  usage: 'svc://BUCKET/KEY [FILE ...]',
  summary: 'append records from stdin or files, batched and pipelined',
  details: [
    'Reads stdin (or each FILE in turn; - is stdin). --format text (default): each line is one record,',
    'its body the line without the newline; json: one {body|body_b64, headers?, timestamp_ms?} per line;',
    'base64: one base64 body per line. Prints the final tail when done (--json: an object).',
    '',
    'Retries are safe only: a refused request worth retrying (429, the server not listening) is retried;',
    'an answer lost in transit is retried only with --match-seq-num (tail: start at the current tail),',
    'which pins every batch to its position so nothing is appended twice; without it the command stops',
    'with exit code 4 and says the last batch may or may not have landed.',
    '',
    `Ctrl-C (or SIGTERM) stops reading, waits up to ${INTERRUPT_FLUSH_MS_MAX / 1000} s for the records read to be acknowledged, says`,
    'what landed and exits 130; a second Ctrl-C stops at once.',
  ].join('\n'),
  flags: [
    FORMAT_FLAG,
    { name: 'match-seq-num', value: 'N|tail', help: 'pin batches to positions from N (or the current tail): exact retries, fails if another writer appends' },
    { name: 'fencing-token', value: 'TOKEN', help: 'present this fencing token' },
    ...PRODUCER_FLAGS,
    { name: 'transport', value: 'http|grpc', help: 'HTTP appends (default) or a gRPC producer session (needs --grpc)' },
  ],
  async run(ctx) {
    const [text, ...files] = ctx.args.expect(1, Number.POSITIVE_INFINITY, 'a stream address svc://BUCKET/KEY, then optional files');
    const addr = parseStreamAddress(text);
    // Every input file is opened-checked before anything is sent: a missing one is a usage error.
    for (const f of files) {
      if (f === '-') continue;
      try {
        accessSync(f, fsConstants.R_OK);
      } catch (err) {
        throw new UsageError(`cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
    }
    const format = parseFormat(ctx.args.str('format'));
    const matchFlag = ctx.args.str('match-seq-num');
    let matchSeqNum: number | 'tail' | undefined;
    if (matchFlag === 'tail') matchSeqNum = 'tail';
    else if (matchFlag !== undefined) matchSeqNum = ctx.args.int('match-seq-num');
    const fencingToken = ctx.args.str('fencing-token');
    const opts = {
      ...(matchSeqNum !== undefined ? { matchSeqNum } : {}),
      ...(fencingToken !== undefined ? { fencingToken } : {}),
      ...producerOptionsOf(ctx.args),
      onRetry: (e: { error: Error; delayMs: number }) => ctx.note(`svc: retrying in ${Math.round(e.delayMs)} ms: ${e.error.message}`),
    };
    const transport = ctx.args.str('transport') ?? 'http';
    let producer: Producer;
    if (transport === 'http') producer = ctx.client().producer(addr, opts);
    else if (transport === 'grpc') producer = (await ctx.grpcClient()).producer(addr, opts);
    else throw new UsageError(`--transport must be http or grpc, got ${JSON.stringify(transport)}`);

    const progress = new Progress('append', ctx.out.isTTY && process.stderr.isTTY === true);
    let firstTicket: Ticket | undefined;
    let count = 0;
    const sources = files.length === 0 ? ['-'] : files;
    // Ctrl-C (or SIGTERM) stops reading; what was read is given a bounded wait to be acknowledged,
    // then the command says exactly what landed and exits 130. A second Ctrl-C stops at once.
    const interrupt = new Interrupt();
    interrupt.lastWords = () => {
      const stopped = new SvcError('aborted', `stopped: ${acknowledgedSoFar(producer)}; later records may or may not have landed`);
      return ctx.json ? JSON.stringify(describeFailure(stopped).json) : `svc: ${stopped.message}`;
    };
    try {
      reading: for (const f of sources) {
        const stream = f === '-' ? process.stdin : createReadStream(f);
        const input = lines(stream, f === '-' ? 'stdin' : f)[Symbol.asyncIterator]();
        for (let lineNo = 1; ; lineNo++) {
          const next = await interrupt.race(input.next());
          if (next === INTERRUPTED) { stream.destroy(); break reading; }
          if (next.done) break;
          const rec: AppendRecord = recordFromLine(next.value, format, `${f === '-' ? 'stdin' : f}:${lineNo}`);
          const ticket = await interrupt.race(producer.submit(rec));
          if (ticket === INTERRUPTED) { stream.destroy(); break reading; }
          firstTicket ??= ticket;
          count++;
          progress.add(1, recordBytes(rec));
        }
      }
      if (interrupt.fired) {
        progress.done();
        ctx.note(`svc: interrupted: waiting up to ${INTERRUPT_FLUSH_MS_MAX / 1000} s for the ${count} records read to be acknowledged (interrupt again to stop now)`);
        const all = await interrupt.within(producer.flush(), INTERRUPT_FLUSH_MS_MAX) && producer.error === undefined;
        const first = all && firstTicket ? (await firstTicket.ack()).seq_num : undefined;
        throw new SvcError('aborted', all
          ? `interrupted: all ${count} records read were appended${first !== undefined ? ` at ${first}..${first + count - 1}` : ''}`
          : `interrupted: ${acknowledgedSoFar(producer)}; later records may or may not have landed`);
      }
      await producer.close();
    } catch (err) {
      if (interrupt.fired) throw err;
      // A bad input line: the records before it were valid and submitted, so they are appended
      // (as xargs runs what came before), and the note says exactly up to where.
      if (err instanceof InputError && count > 0) await producer.close().catch(() => {});
      // What did land, so the user knows where to resume (the failure itself is printed by main).
      const last = producer.lastAck;
      if (last) ctx.note(`svc: acknowledged before the failure: records up to seq_num ${last.end.seq_num - 1}`);
      throw err;
    } finally {
      interrupt.dispose();
      progress.done();
    }
    const first = firstTicket ? (await firstTicket.ack()).seq_num : undefined;
    const tail = producer.lastAck?.tail ?? await ctx.client().checkTail(addr);
    if (ctx.json) await ctx.out.line(JSON.stringify({ appended: count, ...(first !== undefined ? { first_seq_num: first } : {}), tail }));
    else await ctx.out.line(`appended ${count} records${first !== undefined ? ` at ${first}..${first + count - 1}` : ''}; tail ${tail.seq_num}`);
  },
};

/** What an append has had acknowledged so far, in words. */
function acknowledgedSoFar(producer: Producer): string {
  const last = producer.lastAck;
  return last ? `acknowledged: records up to seq_num ${last.end.seq_num - 1}` : 'no record was acknowledged';
}

// ------------------------------------------------------------------ read and tail

/** How read and tail print records: --format, else JSON lines under --json (its help promises one
 *  object per record), else text. */
function outputFormat(ctx: Context): Format {
  return ctx.args.has('format') ? parseFormat(ctx.args.str('format')) : ctx.json ? 'json' : 'text';
}

function readStart(ctx: Context): ReadStart {
  const given = ['seq-num', 'since', 'timestamp-ms', 'tail'].filter((f) => ctx.args.has(f));
  if (given.length > 1) throw new UsageError(`give one start, not ${given.map((g) => `--${g}`).join(' and ')}`);
  if (ctx.args.has('since')) return { timestampMs: parseTimeMs(ctx.args.str('since')!, 'since', Date.now()) };
  if (ctx.args.has('timestamp-ms')) return { timestampMs: ctx.args.int('timestamp-ms')! };
  if (ctx.args.has('tail')) return { tailOffset: ctx.args.int('tail')! };
  return { seqNum: ctx.args.int('seq-num') ?? 0 };
}

export const read: Command = {
  name: 'read',
  usage: 'svc://BUCKET/KEY [--seq-num N | --since 10m | --timestamp-ms T | --tail N] [--limit N] [--until T]',
  summary: 'print records from a position up to the tail (or a limit, or a time)',
  details: [
    'Starts at --seq-num (default 0), at the first record stamped at or after --since (10m ago, an ISO',
    'date, or epoch ms) or --timestamp-ms, or --tail N records before the tail; stops at the tail as it',
    'stands, after --limit records, or before the first record stamped at or after --until.',
    '--format text (default) prints each body and a newline; json and base64 as for append.',
  ].join('\n'),
  flags: [
    { name: 'seq-num', value: 'N', help: 'start at this sequence number (default 0)' },
    { name: 'since', value: 'TIME', help: 'start at this time: 10m (ago), an ISO date or epoch ms' },
    { name: 'timestamp-ms', value: 'MS', help: 'start at this time (epoch ms)' },
    { name: 'tail', value: 'N', help: 'start N records before the tail' },
    { name: 'limit', value: 'N', help: 'stop after N records' },
    { name: 'until', value: 'TIME', help: 'stop before records stamped at or after this time' },
    { name: 'clamp', boolean: true, help: 'start at the earliest retained record when the start was trimmed away' },
    FORMAT_FLAG,
  ],
  async run(ctx) {
    const { addr } = streamArg(ctx);
    const format = outputFormat(ctx);
    const until = ctx.args.str('until');
    const records = ctx.client().read(addr, {
      start: readStart(ctx),
      ...(ctx.args.int('limit') !== undefined ? { limit: ctx.args.int('limit')! } : {}),
      ...(until !== undefined ? { untilMs: parseTimeMs(until, 'until', Date.now()) } : {}),
      clamp: ctx.args.bool('clamp'),
    });
    await printRecords(ctx, records, format);
  },
};

export const tail: Command = {
  name: 'tail',
  usage: 'svc://BUCKET/KEY [-n N] [-f]',
  summary: 'print the last records; -f follows new ones, across drops and star restarts',
  details: [
    'Prints the last N records (default 10). With -f it keeps printing records as they commit, resuming',
    'after a dropped connection or a star restart exactly where it stopped (no record lost or repeated),',
    'until interrupted: SIGINT or SIGTERM ends it with exit code 0.',
  ].join('\n'),
  flags: [
    { name: 'lines', short: 'n', value: 'N', help: 'records before the tail to start with (default 10)' },
    { name: 'follow', short: 'f', boolean: true, help: 'keep following new records' },
    { name: 'heartbeat-silence-ms', value: 'MS', help: 'reconnect after this long without a byte (default 45000)' },
    FORMAT_FLAG,
  ],
  async run(ctx) {
    const { addr } = streamArg(ctx);
    const format = outputFormat(ctx);
    const n = ctx.args.int('lines') ?? 10;
    const c = ctx.client();
    if (!ctx.args.bool('follow')) {
      // The last n records there are: fewer when the stream was trimmed (clamp), never a 410.
      await printRecords(ctx, c.read(addr, { start: { tailOffset: n }, clamp: true }), format);
      return;
    }
    const silence = ctx.args.int('heartbeat-silence-ms');
    const sub = c.subscribe(addr, {
      start: { tailOffset: n },
      ...(silence !== undefined ? { heartbeatSilenceMs: silence } : {}),
      onEvent: (e) => { if (e.type === 'reconnecting' && e.delayMs > 0) ctx.note(`svc: reconnecting at ${e.cursor ?? 'start'} (${e.reason}${e.error ? `: ${e.error.message}` : ''})`); },
    });
    const stop = (): void => sub.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    for await (const batch of sub) {
      for (const r of batch.records) await ctx.out.write(recordToOutput(r, format));
      await ctx.out.flush(); // a follower shows each batch as it commits
    }
  },
};

// ------------------------------------------------------------------ tail position, trim, fence

export const checkTail: Command = {
  name: 'check-tail',
  usage: 'svc://BUCKET/KEY',
  summary: 'print the committed tail: the sequence number the next record receives',
  details: 'Prints the tail\'s seq_num (--json: {seq_num, timestamp_ms}).',
  flags: [],
  async run(ctx) {
    const { addr } = streamArg(ctx);
    const t = await ctx.client().checkTail(addr);
    await ctx.out.line(ctx.json ? JSON.stringify(t) : String(t.seq_num));
  },
};

export const trim: Command = {
  name: 'trim',
  usage: 'svc://BUCKET/KEY (--seq-num N | --before TIME)',
  summary: 'make the records before a position or a time unreadable',
  flags: [
    { name: 'seq-num', value: 'N', help: 'trim every record below N' },
    { name: 'before', value: 'TIME', help: 'trim every record stamped before this time (10m ago, ISO date, epoch ms)' },
  ],
  async run(ctx) {
    const { addr } = streamArg(ctx);
    const seq = ctx.args.int('seq-num');
    const before = ctx.args.str('before');
    if ((seq === undefined) === (before === undefined)) throw new UsageError('give exactly one of --seq-num or --before');
    await ctx.client().trim(addr, seq !== undefined ? { seqNum: seq } : { timestampMs: parseTimeMs(before!, 'before', Date.now()) });
    await ctx.out.line(ctx.json ? JSON.stringify({ trimmed: formatAddress(addr) }) : `trimmed ${formatAddress(addr)}`);
  },
};

export const fence: Command = {
  name: 'fence',
  usage: 'svc://BUCKET/KEY [TOKEN]',
  summary: 'install a fencing token on a stream (no TOKEN clears it)',
  details: 'Appends and sessions that do not present the installed token are refused from then on.',
  flags: [],
  async run(ctx) {
    const { addr, rest } = streamArg(ctx, 1);
    const t = await ctx.client().fence(addr, rest[0] ?? '');
    await ctx.out.line(ctx.json ? JSON.stringify({ tail: t }) : `${rest[0] ? 'fenced' : 'unfenced'} ${formatAddress(addr)}; tail ${t.seq_num}`);
  },
};
