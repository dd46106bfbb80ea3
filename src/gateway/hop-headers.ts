// Headers that never cross the Gateway: they describe one hop's connection, or the stars' own
// routing, or which engine a star runs.

import { FOLLOW_HEADER, HOP_HEADER, LEADER_HEADER } from '../api/proxy.ts';

/** Headers that describe one hop's connection and are never forwarded. */
export const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
/** The stars' own routing headers: a caller cannot set them (a forged svcd-hop would keep stars from
 *  answering 421), and a star's are not shown to callers. */
export const CLUSTER_HEADERS = new Set([HOP_HEADER, FOLLOW_HEADER, LEADER_HEADER]);
/** A star's engine names itself (uWS adds `uWebSockets: 20` to every answer); the Gateway is the
 *  server its callers talk to, so that is not relayed. */
export const STAR_IDENTITY_HEADERS = new Set(['uwebsockets', 'server']);
