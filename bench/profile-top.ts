// Prints the hottest functions (self time) of .cpuprofile files, e.g. those BENCH_PROFILE=<dir>
// writes: `npx tsx bench/profile-top.ts <dir or files…> [--top N]`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { table, fix } from './lib/format.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const ROWS_DEFAULT = 25;

function files(args: string[]): string[] {
  return args.flatMap((a) => (statSync(a).isDirectory()
    ? readdirSync(a).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(a, f))
    : [a]));
}

function summarize(file: string, top: number): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    const dt = p.timeDeltas[i] ?? 0;
    if (!n) continue;
    total += dt;
    const f = n.callFrame;
    // Sources run through tsx report line 0: name the file only.
    const file = f.url ? relative(process.cwd(), f.url.replace(/^file:\/\//, '')) : '';
    const where = file && f.lineNumber > 0 ? `${file}:${f.lineNumber + 1}` : file;
    const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  }
  const idle = selfUs.get('(idle)') ?? 0;
  selfUs.delete('(idle)');
  const rows = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([k, us]) => [k, fix(us / 1000, 1), `${fix((us / Math.max(1, total - idle)) * 100, 1)} %`]);
  return `### ${basename(file)} (${fix(total / 1e6, 1)} s sampled, ${fix((idle / total) * 100, 0)} % idle)\n\n`
    + table(['function (self time)', 'ms', '% of busy time'], rows);
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : ROWS_DEFAULT;
if (args.length === 0) { console.error('usage: tsx bench/profile-top.ts <dir|file.cpuprofile>… [--top N]'); process.exit(2); }
for (const f of files(args)) console.log(`${summarize(f, top)}\n`);
