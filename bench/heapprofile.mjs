// A summary of a V8 sampling heap profile (bench/heap-sample.mjs, the .heapprofile JSON) of the
// gateway: bytes allocated, by group (the groups of bench/cpuprofile.mjs: our own modules,
// undici, Fastify, node's http, ...), by our own module (allocated there, and with that module
// on the stack), and the allocating frames with the most bytes. Per miss when the number of
// misses is given. The profile samples by bytes (a sample per 4 KiB on average): a frame's figure
// is an estimate, good to a few hundred bytes per miss over thousands of misses.
//   node bench/heapprofile.mjs FILE.heapprofile [MISSES]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { groupOf, ownFile } from './cpuprofile.mjs';

/** `{ totalBytes, groups, files, frames }`, each list `[name, selfBytes, (onStackBytes)]` sorted by bytes. */
export function summariseHeap(profile) {
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const groups = new Map();
  const selfFiles = new Map();
  const stackFiles = new Map();
  const frames = new Map();
  let totalBytes = 0;
  // A node's own bytes: the sum of its samples' sizes (sample.size × count: bytes the samples stand for).
  const selfBytes = new Map();
  for (const s of profile.samples ?? []) add(selfBytes, s.nodeId, s.size);
  const walk = (node, files, charged) => {
    const cf = node.callFrame;
    // A native frame (no script) is charged to the nearest caller that has one.
    const frame = cf.url === '' && charged ? charged : node;
    const file = ownFile(cf.url);
    const onStack = file && !files.has(file) ? new Set([...files, file]) : files;
    const bytes = selfBytes.get(node.id) ?? 0;
    if (bytes > 0) {
      totalBytes += bytes;
      const f = frame.callFrame;
      add(groups, f.url === '' ? `(${f.functionName || 'V8'})` : groupOf(f.url), bytes);
      const own = ownFile(f.url);
      if (own) add(selfFiles, own, bytes);
      for (const s of onStack) add(stackFiles, s, bytes);
      const where = f.url === '' ? '' : ` ${ownFile(f.url) ?? f.url.replace(/^.*\/node_modules\//, '')}:${f.lineNumber + 1}`;
      add(frames, `${f.functionName || '(anonymous)'}${where}`, bytes);
    }
    for (const child of node.children ?? []) walk(child, onStack, frame.callFrame.url === '' ? charged : frame);
  };
  walk(profile.head, new Set(), undefined);
  const sorted = (map) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  const files = [...new Set([...selfFiles.keys(), ...stackFiles.keys()])]
    .map((f) => [f, selfFiles.get(f) ?? 0, stackFiles.get(f) ?? 0])
    .sort((a, b) => b[2] - a[2]);
  return { totalBytes, groups: sorted(groups), files, frames: sorted(frames) };
}

/** The summary as printed tables: bytes per miss when `misses` is given, else KiB in all. */
export function printHeapSummary(summary, { misses, top = 25, log = console.log } = {}) {
  const per = (bytes) => (misses ? `${Math.round(bytes / misses)} B` : `${(bytes / 1024).toFixed(0)} KiB`);
  const pct = (bytes) => `${((100 * bytes) / summary.totalBytes).toFixed(1).padStart(5)} %`;
  log(`  allocated: ${per(summary.totalBytes)}${misses ? ` per miss (${misses} misses)` : ''}`);
  log(`\n  | group | share | ${misses ? 'per miss' : 'in all'} |\n  |---|---|---|`);
  for (const [g, b] of summary.groups) log(`  | ${g} | ${pct(b)} | ${per(b)} |`);
  log(`\n  | our module | allocated there | with it on the stack |\n  |---|---|---|`);
  for (const [f, self, stack] of summary.files.filter(([, , s]) => s >= summary.totalBytes / 200)) log(`  | ${f} | ${per(self)} | ${per(stack)} |`);
  log(`\n  | frame (top ${top}, natives charged to their caller) | share | ${misses ? 'per miss' : 'in all'} |\n  |---|---|---|`);
  for (const [f, b] of summary.frames.slice(0, top)) log(`  | \`${f}\` | ${pct(b)} | ${per(b)} |`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, misses] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/heapprofile.mjs FILE.heapprofile [MISSES]');
    process.exit(2);
  }
  printHeapSummary(summariseHeap(JSON.parse(readFileSync(file, 'utf8'))), { misses: misses ? Number(misses) : undefined });
}
