// grpc-js's own log lines, written into the star's log with a bound. grpc-js logs some lines on every
// call a client shapes: a metadata value it cannot take (UTF-8 in a non-binary header) is dropped
// with `Failed to add metadata entry …` on stderr, per call, so one client could fill the star's log.
// Each kind of line (its first GRPC_LOG_KIND_CHARS characters: grpc-js's messages open with a fixed
// phrase) is written at most once per GRPC_LOG_REPEAT_MS; the next one written after that says how
// many like it were held back (a count is told only with that next line). The clock is monotonic, so
// a wall-clock step back cannot silence a kind. grpc-js's logger is process-wide: the last
// startGrpcServer's is the one in place, and all of them write to the same log.
import { format } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { GRPC_LOG_KIND_CHARS, GRPC_LOG_KINDS_MAX, GRPC_LOG_REPEAT_MS } from '../../config/limits.ts';

interface Kind { writtenAtMs: number; held: number }

export class RepeatLimitedLog {
  /** In insertion order, so the oldest kind is the first forgotten past GRPC_LOG_KINDS_MAX. */
  private readonly kinds = new Map<string, Kind>();

  constructor(private readonly write: (line: string) => void, private readonly nowMs: () => number) {}

  line(text: string): void {
    const key = text.slice(0, GRPC_LOG_KIND_CHARS);
    const now = this.nowMs();
    const kind = this.kinds.get(key);
    if (kind !== undefined && now - kind.writtenAtMs < GRPC_LOG_REPEAT_MS) {
      kind.held++;
      return;
    }
    const held = kind?.held ?? 0;
    this.kinds.delete(key);
    if (this.kinds.size >= GRPC_LOG_KINDS_MAX) this.kinds.delete(this.kinds.keys().next().value as string);
    this.kinds.set(key, { writtenAtMs: now, held: 0 });
    this.write(held > 0 ? `${text} (${held} more like it held back since the last one written)` : text);
  }
}

/** Routes grpc-js's log to `write`: errors and info (GRPC_VERBOSITY) each kind bounded as above;
 *  debug lines, which are the traces an operator asks for with GRPC_TRACE, all of them. */
export function routeGrpcLog(write: (line: string) => void, nowMs: () => number = () => performance.now()): void {
  const log = new RepeatLimitedLog(write, nowMs);
  const text = (level: string, message: unknown, rest: unknown[]): string => `grpc-js ${level} ${format(message, ...rest)}`;
  grpc.setLogger({
    error: (message?: unknown, ...rest: unknown[]) => log.line(text('E', message, rest)),
    info: (message?: unknown, ...rest: unknown[]) => log.line(text('I', message, rest)),
    debug: (message?: unknown, ...rest: unknown[]) => write(text('D', message, rest)),
  });
}
