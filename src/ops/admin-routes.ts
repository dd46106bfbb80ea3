// The ops listener's /admin/ surface: the JSON admin bridge under /admin/api/ and the dashboard's
// pages, both present only while --admin-ui is on (the default); --admin-ui-reader=false removes
// ReadStreamRecords, the one verb returning record bodies.

import { adminReads, type AdminReadContext } from '../api/grpc/admin-reads.ts';
import { adminBridge } from './admin-bridge.ts';
import { dashboard } from './dashboard.ts';
import type { OpsOptions } from './ops-server.ts';

export interface AdminSurfaceOptions extends AdminReadContext {
  /** `--admin-ui`: serve /admin/ at all. */
  ui: boolean;
  /** `--admin-ui-reader`: serve ReadStreamRecords. */
  reader: boolean;
  logError(msg: string, err?: unknown): void;
}

/** The ops listener's `extra` hook for /admin/, or undefined when --admin-ui is off. */
export function adminSurface(opts: AdminSurfaceOptions): OpsOptions['extra'] {
  if (!opts.ui) return undefined;
  const bridge = adminBridge({ reads: adminReads(opts), reader: opts.reader, logError: opts.logError });
  const pages = dashboard();
  return async (method, path, body) => (await bridge(method, path, body)) ?? pages(method, path);
}
