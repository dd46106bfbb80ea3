// Invariant assertions that stay on in production. A broken invariant is a bug that could acknowledge
// or serve a record at the wrong position, so the star stops rather than go on: the throw reaches the
// durable loop or the caller, and a restart recovers from what is durable (the WAL, the segments and
// the metadata rows are the truth; memory is not). Each check is a comparison or two, cheap enough
// for the hot path, and its message is built only when it fails.

export class InvariantError extends Error {
  constructor(message: string) {
    super(`invariant broken: ${message}`);
    this.name = 'InvariantError';
  }
}

export function invariant(ok: boolean, message: () => string): asserts ok {
  if (!ok) throw new InvariantError(message());
}
