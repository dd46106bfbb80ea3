// Idempotent producers (Producer-Id, Producer-Epoch, Producer-Seq): parsing the headers and deciding,
// from the stream's committed producer state, whether an append is new, a duplicate or refused. Pure:
// the state it reads was rebuilt from the records that carried each accepted tuple (records.ts).

import { dsError, dsInvalid } from './errors.ts';
import type { ProducerTuple } from './records.ts';
import type { ProducerState } from './state.ts';

const UINT_RE = /^(0|[1-9]\d*)$/;

function uint(v: string, name: string): number {
  if (!UINT_RE.test(v)) throw dsInvalid(`${name} must be a non-negative integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw dsInvalid(`${name} is out of range`);
  return n;
}

/** The producer tuple of a request: all three headers or none (400 otherwise). */
export function parseProducer(header: (name: string) => string | undefined): ProducerTuple | undefined {
  const id = header('producer-id');
  const epoch = header('producer-epoch');
  const seq = header('producer-seq');
  if (id === undefined && epoch === undefined && seq === undefined) return undefined;
  if (id === undefined || epoch === undefined || seq === undefined) throw dsInvalid('Producer-Id, Producer-Epoch and Producer-Seq go together');
  if (id === '') throw dsInvalid('Producer-Id must not be empty');
  return { id, epoch: uint(epoch, 'Producer-Epoch'), seq: uint(seq, 'Producer-Seq') };
}

export type ProducerVerdict =
  | { kind: 'accept' }
  /** Already committed: answer 204 with the highest accepted seq, append nothing. */
  | { kind: 'duplicate'; epoch: number; highestSeq: number };

/** Decides an append's fate, or throws the protocol's refusal (403 stale epoch, 409 gap, 400). */
export function judgeProducer(p: ProducerTuple, current: ProducerState | undefined): ProducerVerdict {
  if (!current) {
    if (p.seq !== 0) throw gap(0, p.seq);
    return { kind: 'accept' };
  }
  if (p.epoch < current.epoch) {
    throw dsError('permission_denied', `producer epoch ${p.epoch} is stale (current ${current.epoch})`, [['Producer-Epoch', String(current.epoch)]]);
  }
  if (p.epoch > current.epoch) {
    if (p.seq !== 0) throw dsInvalid('a new producer epoch starts at Producer-Seq 0');
    return { kind: 'accept' };
  }
  if (p.seq <= current.seq) return { kind: 'duplicate', epoch: current.epoch, highestSeq: current.seq };
  if (p.seq !== current.seq + 1) throw gap(current.seq + 1, p.seq);
  return { kind: 'accept' };
}

function gap(expected: number, received: number) {
  return dsError('already_exists', `producer sequence gap: expected ${expected}, received ${received}`, [
    ['Producer-Expected-Seq', String(expected)], ['Producer-Received-Seq', String(received)],
  ]);
}
