// The time on a running process's log lines: every line a star, its flusher or the Gateway writes
// once running starts with the wall-clock time (UTC, milliseconds), so an operator can line its
// events up with its peers', its clients' and PostgreSQL's logs. A refusal to start stays one plain
// line (`svcd: <why>`), which scripts and supervisors read as is.

/** `line` stamped with the time it is written. */
export function stamped(line: string): string {
  return `${new Date().toISOString()} ${line}`;
}
