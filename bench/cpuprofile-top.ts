// Summarises a V8 .cpuprofile (from `node --cpu-prof`): the top functions by
// self time and by total (inclusive) time, and self time per package/area.
//
//   node --import tsx bench/cpuprofile-top.ts <file.cpuprofile> [N=30] [filter]
// `filter` (a substring of function name or url) lists the callers of matching frames.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, nArg, filter] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile-top.ts <file.cpuprofile> [N] [filter]');
const N = Number(nArg ?? 30);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node from the samples and their time deltas (µs).
const selfUs = new Map<number, number>();
p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const totalUs = p.timeDeltas.reduce((a, b) => a + b, 0);

const short = (url: string) =>
  url
    .replace(/^file:\/\/\/work\/main\//, '')
    .replace(/^node_modules\//, 'nm/')
    .replace(/\?.*$/, '');
const key = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
function area(n: Node): string {
  const u = n.callFrame.url;
  if (!u) return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native/builtin)';
  if (u.startsWith('node:'))
    return u
      .replace(/^node:(internal\/)?/, 'node:')
      .split('/')
      .slice(0, 2)
      .join('/');
  const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(u);
  if (m) return m[1]!;
  return short(u).split('/').slice(0, 3).join('/');
}

const self = new Map<string, number>();
const total = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  self.set(key(n), (self.get(key(n)) ?? 0) + us);
  areas.set(area(n), (areas.get(area(n)) ?? 0) + us);
  // Inclusive: each distinct function on the stack once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const k = key(byId.get(cur)!);
    if (seen.has(k)) continue;
    seen.add(k);
    total.set(k, (total.get(k) ?? 0) + us);
  }
}

const pct = (us: number) => ((100 * us) / totalUs).toFixed(1).padStart(5) + '%';
const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled`);
console.log('\nself time by area:');
for (const [k, us] of top(areas, 25)) console.log(`  ${pct(us)}  ${k}`);
console.log('\nself time by function:');
for (const [k, us] of top(self, N)) console.log(`  ${pct(us)}  ${k}`);
console.log('\ntotal (inclusive) time by function:');
for (const [k, us] of top(total, N)) console.log(`  ${pct(us)}  ${k}`);

if (filter) {
  const callers = new Map<string, number>();
  for (const [id, us] of selfUs) {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur)!);
      if (!k.includes(filter)) continue;
      const up = parent.get(cur);
      const ck = up === undefined ? '(root)' : key(byId.get(up)!);
      callers.set(ck, (callers.get(ck) ?? 0) + us);
      break;
    }
  }
  console.log(`\ncallers of frames matching "${filter}" (inclusive):`);
  for (const [k, us] of top(callers, N)) console.log(`  ${pct(us)}  ${k}`);
}
