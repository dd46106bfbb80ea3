// CORS for browser callers of the data plane (spec: Errors, "a denied origin's preflight is 403. Its
// plain requests are served without CORS headers"; Limits: preflight max age 600 s).
//
// Origins are allowed by --cors-allowed-origins (exact origins, or `*` for any). Nothing is allowed
// by default: a browser on another origin gets a 403 preflight and unreadable answers, while
// non-browser clients, which send no preflight, are unaffected.

import { CORS_PREFLIGHT_MAX_AGE_S } from '../config/limits.ts';
import { ServiceError } from '../core/errors.ts';

/** Request headers a browser may send: credentials, JSON bodies and the SSE resume cursor. */
const ALLOWED_REQUEST_HEADERS = 'Authorization, Content-Type, Last-Event-ID';
/** Answer headers a browser script may read beyond the CORS-safelisted ones. */
const EXPOSED_HEADERS = 'Retry-After, Allow';
const VARY_ONLY: [string, string][] = [['Vary', 'Origin']];

export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(allowed: readonly string[]) {
    this.any = allowed.includes('*');
    this.origins = new Set(allowed.filter((o) => o !== '*').map((o) => o.replace(/\/+$/, '').toLowerCase()));
  }

  /** True when some origin is allowed, so plain requests must be checked for an Origin header. */
  get enabled(): boolean { return this.any || this.origins.size > 0; }

  /** `*` admits every real origin, not `null` (sandboxed frames, file:), which must be listed. */
  allows(origin: string): boolean {
    const o = origin.toLowerCase();
    return this.origins.has(o) || (this.any && o !== 'null');
  }

  /** Headers for a plain (non-preflight) request from `origin`. While any origin is allowed, every
   *  answer says `Vary: Origin`, so a shared cache never hands one origin's answer to another. */
  responseHeaders(origin: string | undefined): [string, string][] | undefined {
    if (!this.enabled) return undefined;
    if (origin === undefined || !this.allows(origin)) return VARY_ONLY;
    return [['Access-Control-Allow-Origin', origin], ['Vary', 'Origin'], ['Access-Control-Expose-Headers', EXPOSED_HEADERS]];
  }

  /** Answers a preflight for `methods` (the path's allowed methods): the 204's headers, or a 403. */
  preflight(origin: string, requestedMethod: string, methods: readonly string[]): [string, string][] {
    if (!this.allows(origin)) throw new ServiceError('permission_denied', `origin ${origin} is not allowed`);
    if (!methods.includes(requestedMethod)) throw new ServiceError('permission_denied', `method ${requestedMethod} is not allowed on this path`);
    return [
      ['Access-Control-Allow-Origin', origin],
      ['Vary', 'Origin'],
      ['Access-Control-Allow-Methods', methods.join(', ')],
      ['Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS],
      ['Access-Control-Max-Age', String(CORS_PREFLIGHT_MAX_AGE_S)],
    ];
  }
}
