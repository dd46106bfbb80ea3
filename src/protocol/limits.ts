// The limits a request or an answer is held to on the wire: the spec's Limits table where it names
// them, and the service's own bounds on names, keys, tokens and headers where it does not ("not
// shown"; see README). Part of the protocol leaf: the input rules (rules.ts) enforce them on the
// server, and the client sizes its batches and pages by them. Units are in the names.
//
// config/limits.ts re-exports every one of these, so it still lists every limit of the service.

const KiB = 1024;
const MiB = 1024 * KiB;

// --- Spec: Limits table ---------------------------------------------------------------------------
export const APPEND_RECORDS_MAX = 65_536;
export const RECORD_CONTENT_BYTES_MAX = 1 * MiB;
export const BATCH_CONTENT_BYTES_MAX = 100 * MiB;
/** A star's default; `--max-read-records` changes it there. */
export const READ_RECORDS_MAX = 8192;
/** A star's default; `--max-read-bytes` changes it there. */
export const READ_BYTES_MAX = 8 * MiB;
export const LIST_PAGE_MAX = 1000;
export const LIST_PAGE_DEFAULT = 1000; // spec: "not shown"; S2 also defaults to its maximum

// --- The service's own input bounds --------------------------------------------------------------
/** Header count per record: not in the spec; bounded so one record cannot carry a million headers. */
export const RECORD_HEADERS_MAX = 1024;
export const BUCKET_NAME_BYTES_MAX = 128; // spec: "not shown"; see README
export const STREAM_KEY_BYTES_MAX = 1024; // spec: "not shown"; see README
export const FENCING_TOKEN_BYTES_MAX = 256;
export const CREATION_TOKEN_BYTES_MAX = 256;
/** A bucket's `location` label. */
export const LOCATION_BYTES_MAX = 256;
