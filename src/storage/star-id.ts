// A star's one identity: --star-id when given, else the id made at the data dir's first start and
// kept in <data-dir>/star-id, so a restarted star is the same member of the cluster. Auth's peer
// tokens, ListStars, Health and the dashboard all name the star by it.

import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BootError } from '../config/boot-error.ts';

const STAR_ID_FILE = 'star-id';

/** The data dir's star id, made (and made durable) on first use. */
export function starIdOf(dataDir: string, given: string, pattern: RegExp): string {
  const path = join(dataDir, STAR_ID_FILE);
  if (given !== '') return given;
  if (existsSync(path)) {
    const id = readFileSync(path, 'utf8').trim();
    if (!pattern.test(id)) throw new BootError(`data dir ${dataDir}: ${STAR_ID_FILE} holds ${JSON.stringify(id)}, not a star id; fix or remove it`);
    return id;
  }
  const id = `star-${randomBytes(6).toString('hex')}`;
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${id}\n`);
  const fd = openSync(tmp, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path);
  const dir = openSync(dataDir, 'r');
  fsyncSync(dir);
  closeSync(dir);
  return id;
}
