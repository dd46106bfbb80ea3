// The data dir's directories, made before anything else touches them.

import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { BootError } from '../config/boot-error.ts';

/** Makes `dir` and its missing parents one level at a time, so a path that cannot be a directory is
 *  refused with its reason: a file on the way (ENOTDIR), no permission, or a place where mkdir says
 *  ENOENT although the parent exists (under /proc, where Node's own recursive mkdir loops forever). */
export function makeDir(dir: string): void {
  try {
    if (statSync(dir).isDirectory()) return;
    throw new BootError(`data dir ${dir}: not a directory`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === undefined) throw err;
    if (code !== 'ENOENT') throw new BootError(`data dir ${dir}: ${code}`);
  }
  const parent = dirname(dir);
  if (parent !== dir) makeDir(parent);
  try {
    mkdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && statSync(dir).isDirectory()) return;
    throw new BootError(`data dir ${dir}: cannot be created (${code ?? String(err)})`);
  }
}
