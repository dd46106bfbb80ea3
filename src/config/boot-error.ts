// The one kind of failure a start is refused with: a reason the operator can fix (a port in use, a
// data dir that is a file, a TLS file missing, PostgreSQL away, a damaged journal), said by main in
// one line with exit 2, never a stack trace. A leaf module, so every layer that checks something at
// start (config, auth, storage, api) can throw it without pointing outward.

export class BootError extends Error {}
