// Virtual hosts (spec: Gateway hosts). With a DNS zone configured, `{bucket}.{zone}` carries the
// bucket in the host: `/v1/streams/{key}/...` there means `/v1/streams/{bucket}/{key}/...`, and any
// other path on a bucket host is 404. A bucket host's label is the bucket's name, dots included.
// `api.{zone}` (api is reserved, never a bucket), the zone's apex and hosts outside the zone serve
// path-style unchanged.

import { isBucketName } from '../protocol/rules.ts';

export type HostRoute = { kind: 'path'; path: string } | { kind: 'not-found'; why: string };

/** The reserved label: the administration host, never a bucket. */
export const API_HOST_LABEL = 'api';

/** The host name of a Host header: lower case, without the port or a trailing dot. */
export function hostName(header: string | undefined): string {
  if (!header) return '';
  let h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1); // an IPv6 literal
  const colon = h.lastIndexOf(':');
  if (colon >= 0) h = h.slice(0, colon);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/** Where a request for `rawPath` (no query) on `hostHeader` goes upstream. `zone` '' disables hosts. */
export function routeHost(zone: string, hostHeader: string | undefined, rawPath: string): HostRoute {
  if (zone === '') return { kind: 'path', path: rawPath };
  const host = hostName(hostHeader);
  const suffix = `.${zone}`;
  if (!host.endsWith(suffix)) return { kind: 'path', path: rawPath }; // the apex, or outside the zone
  const label = host.slice(0, -suffix.length);
  if (label === API_HOST_LABEL) return { kind: 'path', path: rawPath };
  // The whole label is the bucket, dots and all (as S3's virtual hosts take `my.bucket.s3…`); one
  // that is not a bucket name (a space, '/', '?', '%': the host would be spliced into the path) names
  // no bucket host.
  if (!isBucketName(label)) return { kind: 'not-found', why: `no bucket host ${JSON.stringify(host)}` };
  const prefix = '/v1/streams/';
  if (!rawPath.startsWith(prefix) || rawPath.length === prefix.length) {
    return { kind: 'not-found', why: `a bucket host serves only /v1/streams/{key}/...; bucket administration rides ${API_HOST_LABEL}.${zone}` };
  }
  return { kind: 'path', path: `${prefix}${label}/${rawPath.slice(prefix.length)}` };
}
