// AdminService: the admin plane. Drain and Decommission move a star's leases to the other stars of a
// cluster (cluster/cluster-service.ts); the only star cannot be drained or decommissioned
// (FAILED_PRECONDITION), nor can a cluster's last active one. The read verbs are
// admin-reads.ts, shared with the ops listener's JSON admin bridge; credential verbs go to the auth
// hook and answer UNIMPLEMENTED while it is absent.

import { ServiceError } from '../../core/errors.ts';
import type { AdminServiceHandlers } from '../../gen/svc/v1/AdminService.ts';
import { adminReads, credentialToWire, type AdminAddress, type AdminGate } from './admin-reads.ts';
import { authorize, unary, type GrpcContext, type UnaryCallState } from './context.ts';
import type { GrpcAuthHooks } from './hooks.ts';

function credentialHook<K extends 'createCredential' | 'revokeCredential'>(ctx: GrpcContext, name: K): NonNullable<GrpcAuthHooks[K]> {
  const hook = ctx.auth?.[name];
  if (!hook) throw new ServiceError('unimplemented', 'the credential registry is not configured on this star');
  return hook.bind(ctx.auth) as NonNullable<GrpcAuthHooks[K]>;
}

/** The one star: '' names it, any other id is unknown. */
function onlyStar(ctx: GrpcContext, starId: string): void {
  if (starId !== '' && starId !== ctx.star.id) throw new ServiceError('not_found', `no star ${starId} in this cluster`);
}

export function adminServiceHandlers(ctx: GrpcContext): AdminServiceHandlers {
  const admin = async (verb: string, c: UnaryCallState, at: AdminAddress = {}): Promise<void> => {
    const caller = await authorize(ctx, {
      verb, plane: 'admin', metadata: c.metadata,
      ...(at.bucket !== undefined ? { bucket: at.bucket } : {}), ...(at.key !== undefined ? { key: at.key } : {}),
    });
    c.deadlineAt(caller.expMs);
  };
  const gate = (verb: string, c: UnaryCallState): AdminGate => (at) => admin(verb, c, at);
  // The read verbs are authorized before their request is read (spec: the admin plane requires
  // svc:admin, and denial comes before anything about the request), and again at the gate with the
  // address they name.
  const reads = adminReads({
    service: ctx.service,
    star: ctx.star,
    ...(ctx.cluster ? { cluster: ctx.cluster } : {}),
    ...(ctx.audit ? { audit: ctx.audit } : {}),
    ...(ctx.auth?.listCredentials ? { listCredentials: ctx.auth.listCredentials.bind(ctx.auth) } : {}),
  });

  return {
    Drain: unary(async (req, _md, c) => {
      await admin('Drain', c);
      if (ctx.cluster) return { leases_moved: await ctx.cluster.drain(req.star_id, false) };
      onlyStar(ctx, req.star_id);
      throw new ServiceError('failed_precondition', 'cannot drain the only star: no other star can take its leases');
    }),

    Decommission: unary(async (req, _md, c) => {
      await admin('Decommission', c);
      if (ctx.cluster) return { leases_moved: await ctx.cluster.drain(req.star_id, true) };
      onlyStar(ctx, req.star_id);
      throw new ServiceError('failed_precondition', 'cannot decommission the only star of the cluster');
    }),

    CreateCredential: unary(async (req, _md, c) => {
      await admin('CreateCredential', c);
      const created = await credentialHook(ctx, 'createCredential')({ key_id: req.key_id, scope: req.scope });
      return { credential: credentialToWire(created.credential), secret: created.secret };
    }),

    RevokeCredential: unary(async (req, _md, c) => {
      await admin('RevokeCredential', c);
      if (req.key_id === '') throw new ServiceError('invalid_argument', 'key_id is required');
      return { credential: credentialToWire(await credentialHook(ctx, 'revokeCredential')(req.key_id)) };
    }),

    ListCredentials: unary(async (req, _md, c) => { await admin('ListCredentials', c); return reads.ListCredentials(req, gate('ListCredentials', c)); }),
    Health: unary(async (req, _md, c) => { await admin('Health', c); return reads.Health(req, gate('Health', c)); }),
    ListStars: unary(async (req, _md, c) => { await admin('ListStars', c); return reads.ListStars(req, gate('ListStars', c)); }),
    GetClusterOverview: unary(async (req, _md, c) => { await admin('GetClusterOverview', c); return reads.GetClusterOverview(req, gate('GetClusterOverview', c)); }),
    ListStreamSummaries: unary(async (req, _md, c) => { await admin('ListStreamSummaries', c); return reads.ListStreamSummaries(req, gate('ListStreamSummaries', c)); }),
    ListBucketSummaries: unary(async (req, _md, c) => { await admin('ListBucketSummaries', c); return reads.ListBucketSummaries(req, gate('ListBucketSummaries', c)); }),
    GetStreamDetail: unary(async (req, _md, c) => { await admin('GetStreamDetail', c); return reads.GetStreamDetail(req, gate('GetStreamDetail', c)); }),
    GetStreamLiveStats: unary(async (req, _md, c) => { await admin('GetStreamLiveStats', c); return reads.GetStreamLiveStats(req, gate('GetStreamLiveStats', c)); }),
    ListAuditQueues: unary(async (req, _md, c) => { await admin('ListAuditQueues', c); return reads.ListAuditQueues(req, gate('ListAuditQueues', c)); }),
    PeekAuditQueue: unary(async (req, _md, c) => { await admin('PeekAuditQueue', c); return reads.PeekAuditQueue(req, gate('PeekAuditQueue', c)); }),
    ReadStreamRecords: unary(async (req, _md, c) => { await admin('ReadStreamRecords', c); return reads.ReadStreamRecords(req, gate('ReadStreamRecords', c)); }),
  };
}
