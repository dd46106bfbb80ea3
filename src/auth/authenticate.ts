// Authentication: from what a transport saw (the `authorization` header or gRPC metadata value,
// and for mtls whether the TLS layer verified a client certificate) to a Principal, under the one
// mode that applies to every caller, client or peer star. HTTP, both gRPC planes and the data
// bridge all call the same Authenticator, so a surface cannot drift from the others.
//
// Credentials come only from the header: tokens in query parameters are never looked at.

import { createHash, timingSafeEqual } from 'node:crypto';
import { decodeJwt } from 'jose';
import { ServiceError } from '../protocol/errors.ts';
import type { AuthConfig, AuthMode } from './config.ts';
import type { JwtVerifier } from './jwt.ts';
import { TOKEN_CHARS_MAX } from './jwt.ts';
import { operatorPrincipal, TRUSTED_PRINCIPAL, type Principal } from './principal.ts';
import { BootError } from '../config/boot-error.ts';

/** What the transport knows about a request, beyond its headers. */
export interface TransportFacts {
  /** mtls: the TLS layer verified the client certificate against the client CA. */
  clientCertVerified?: boolean;
}

/** A header as transports hand it over: node:http joins some, gRPC metadata may repeat. */
export type AuthorizationValue = string | readonly string[] | undefined;

export interface Authenticator {
  readonly mode: AuthMode;
  authenticate(authorization: AuthorizationValue, facts?: TransportFacts): Promise<Principal>;
}

function unauthenticated(message: string): ServiceError {
  return new ServiceError('unauthenticated', message);
}

/** The single header value, or why there is not exactly one. */
function singleHeader(value: AuthorizationValue): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (value.length === 0) return undefined;
  // Two Authorization headers could be read differently by a proxy and by us: refuse both.
  if (value.length > 1) throw unauthenticated('more than one Authorization header');
  return value[0];
}

/** Split `<scheme> <credentials>`; the scheme compares case-insensitively (RFC 9110 §11.1). */
function credentialsFor(header: string | undefined, scheme: 'Bearer' | 'Basic'): string {
  if (header === undefined || header === '') throw unauthenticated(`missing Authorization: ${scheme} credentials`);
  if (header.length > TOKEN_CHARS_MAX + 16) throw unauthenticated('Authorization header too large');
  const match = /^([A-Za-z]+) +(\S+) *$/.exec(header);
  if (match === null) throw unauthenticated('malformed Authorization header');
  if (match[1].toLowerCase() !== scheme.toLowerCase()) throw unauthenticated(`Authorization scheme must be ${scheme}`);
  return match[2];
}

/**
 * Constant-time equality of two strings of any lengths: both sides are hashed to 32 bytes first,
 * so neither the content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

function basicAuthenticator(username: string, password: string): Authenticator['authenticate'] {
  return async (authorization) => {
    const encoded = credentialsFor(singleHeader(authorization), 'Basic');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw unauthenticated('malformed Basic credentials');
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw unauthenticated('malformed Basic credentials');
    // Compare both halves every time, so a right username is not told apart by timing either.
    const userOk = constantTimeEqual(decoded.slice(0, colon), username);
    const passOk = constantTimeEqual(decoded.slice(colon + 1), password);
    if (!(userOk && passOk)) throw unauthenticated('wrong username or password');
    return operatorPrincipal(username);
  };
}

/**
 * The authenticator for a parsed config. jwt mode needs the verifier built from config.jwt (async,
 * since remote key sources fetch at start); the other modes need nothing more.
 */
export function createAuthenticator(config: AuthConfig, verifier?: JwtVerifier): Authenticator {
  switch (config.mode) {
    case 'off':
      return { mode: 'off', authenticate: async () => TRUSTED_PRINCIPAL };
    case 'mtls':
      return {
        mode: 'mtls',
        async authenticate(_authorization, facts) {
          // The listeners already refuse a peer without a verified certificate (HTTP with a 401
          // before any route, gRPC in its handshake); this is the second lock, for a transport
          // that lets one through.
          if (facts?.clientCertVerified !== true) throw unauthenticated('a verified client certificate is required');
          return TRUSTED_PRINCIPAL;
        },
      };
    case 'jwt': {
      if (verifier === undefined) throw new BootError('auth: jwt mode needs a JWT verifier');
      return {
        mode: 'jwt',
        async authenticate(authorization) {
          return verifier.verify(credentialsFor(singleHeader(authorization), 'Bearer'));
        },
      };
    }
    case 'basic': {
      if (config.basic === undefined) throw new BootError('auth: basic mode needs an admin username and password');
      return { mode: 'basic', authenticate: basicAuthenticator(config.basic.username, config.basic.password) };
    }
  }
}

/**
 * The `sub` of the bearer token in `authorization`, for accounting per tenant (per sub, as the
 * spec's limits are) once the authenticator has accepted that same header. It decodes without
 * verifying, so it must never decide what a caller may do: only whose budget its bytes are
 * charged to. Undefined without a bearer token or a string `sub`.
 */
export function bearerSubject(authorization: AuthorizationValue): string | undefined {
  let header: string | undefined;
  try {
    header = singleHeader(authorization);
  } catch {
    return undefined;
  }
  const m = header === undefined ? null : /^bearer +(\S+) *$/i.exec(header);
  if (m === null) return undefined;
  try {
    const sub = decodeJwt(m[1]).sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}
