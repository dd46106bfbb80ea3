// Tokens and credentials: `token` exchanges an api key for a short-lived scoped token (HTTP, no bearer
// needed); `credentials create|list|revoke` drive the admin plane over gRPC (needs a token with
// svc:admin under jwt auth).

import { UsageError } from '../args.ts';
import type { Command } from '../command.ts';

export const token: Command = {
  name: 'token',
  usage: '--key-id ID (--bucket B | --scope SCOPE) [--ttl-seconds N]',
  summary: 'exchange an api key for a short-lived token (prints it)',
  details: [
    'The secret comes from SVC_SECRET (preferred: a flag shows in the process list) or --secret.',
    'Prints the token (--json: {token, expires_at_unix_ms}). Use it as: export SVC_TOKEN=$(svc token ...)',
  ].join('\n'),
  flags: [
    { name: 'key-id', value: 'ID', env: 'SVC_KEY_ID', help: 'the credential\'s key id' },
    { name: 'secret', value: 'SECRET', env: 'SVC_SECRET', help: 'the credential\'s secret' },
    { name: 'bucket', value: 'BUCKET', help: 'narrow the credential\'s grants to this bucket' },
    { name: 'scope', value: 'SCOPE', help: 'or ask for this subset of its grants (space-separated)' },
    { name: 'ttl-seconds', value: 'N', help: 'lifetime (server default 15 minutes, at most 1 hour)' },
  ],
  async run(ctx) {
    ctx.args.expect(0, 0, 'no positional arguments');
    const keyId = ctx.args.str('key-id');
    const secret = ctx.args.str('secret');
    if (keyId === undefined || secret === undefined) throw new UsageError('give --key-id and the secret (SVC_SECRET or --secret)');
    const bucket = ctx.args.str('bucket');
    const scope = ctx.args.str('scope');
    if ((bucket === undefined) === (scope === undefined)) throw new UsageError('give exactly one of --bucket or --scope');
    const ttl = ctx.args.int('ttl-seconds');
    const t = await ctx.client().exchangeToken({
      keyId, secret, ...(bucket !== undefined ? { bucket } : { scope: scope! }), ...(ttl !== undefined ? { ttlSeconds: ttl } : {}),
    });
    await ctx.out.line(ctx.json ? JSON.stringify(t) : t.token);
  },
};

export const credentialsCreate: Command = {
  name: 'credentials create',
  usage: '--scope SCOPE [--key-id ID]',
  summary: 'create an api-key credential (admin plane, gRPC); prints the secret once',
  details: 'Prints key id and secret (--json: the credential and the secret). The secret is shown only here.',
  flags: [
    { name: 'scope', value: 'SCOPE', help: 'grants in the scope grammar, e.g. "svc:append:orders:*"' },
    { name: 'key-id', value: 'ID', help: 'key id (default: generated ck_ + 16 hex)' },
  ],
  async run(ctx) {
    ctx.args.expect(0, 0, 'no positional arguments');
    const scope = ctx.args.str('scope');
    if (scope === undefined) throw new UsageError('give --scope');
    const keyId = ctx.args.str('key-id');
    const r = await (await ctx.grpcClient()).createCredential({ scope, ...(keyId !== undefined ? { keyId } : {}) });
    await ctx.out.line(ctx.json ? JSON.stringify(r) : `key_id ${r.credential.key_id}\nsecret ${r.secret}`);
  },
};

export const credentialsList: Command = {
  name: 'credentials list',
  usage: '',
  summary: 'list credentials (never secrets)',
  flags: [],
  async run(ctx) {
    ctx.args.expect(0, 0, 'no positional arguments');
    for await (const c of (await ctx.grpcClient()).credentials()) {
      await ctx.out.line(ctx.json ? JSON.stringify(c) : `${c.key_id}\t${c.state}\t${c.scope}`);
    }
  },
};

export const credentialsRevoke: Command = {
  name: 'credentials revoke',
  usage: 'KEY_ID',
  summary: 'revoke a credential (immediate; tokens already minted live out their TTL)',
  flags: [],
  async run(ctx) {
    const [keyId] = ctx.args.expect(1, 1, 'one key id');
    await (await ctx.grpcClient()).revokeCredential(keyId);
    await ctx.out.line(ctx.json ? JSON.stringify({ revoked: keyId }) : `revoked ${keyId}`);
  },
};
