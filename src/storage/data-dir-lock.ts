// One process per data dir: a star (or the credentials CLI) takes <dataDir>/LOCK holding its pid.
// A lock whose pid is gone (a star killed with SIGKILL) is taken over; a live one refuses, because two
// writers on one WAL and one metadata journal would corrupt both.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BootError } from '../config/boot-error.ts';

export interface DataDirLock { release(): void }

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return { release: () => rmSync(path, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new BootError(`data dir ${dir} is in use by process ${pid}`);
      }
      rmSync(path, { force: true }); // stale: its owner is gone
    }
  }
  throw new Error(`cannot lock data dir ${dir}`);
}
