// A summary of a V8 CPU profile (`node --cpu-prof`, the .cpuprofile JSON) of the gateway: where
// its CPU time went, as tables. Each sample's time (until the next sample) is charged to the
// sample's frame; a native frame (no script: JSON.parse, a socket's writev, zlib's writeSync) is
// charged to the JavaScript frame that called it, so socket writes land in node's net/streams
// code and gzip in node:zlib, not in one "native" heap.
//   - groups: our own modules (dist/), undici, Fastify, pino, prom-client, other dependencies,
//     node:zlib, node's sockets and streams, node's http, the rest of node, GC, (program)
//     (V8 and libuv outside JavaScript), idle;
//   - our own modules, each file: its self time, and its time on the stack (a sample counted
//     once for a file however many of its frames the stack holds: what a step costs with
//     everything it calls synchronously);
//   - the frames with the most self time;
//   - the steps of the request's path (src/steps/flow.ts: recv, hash, lookup, fetch, store,
//     deliver, and the record that logs and counts it): each sample charged to the innermost
//     step function on its stack (STEPS below), else, for what runs from an event with none of
//     ours on the stack (undici parsing the wiki's answer, node:http parsing the request, Fastify
//     routing, GC), to the group its frame belongs to.
// Figures are per miss when the number of misses the process served is given.
//   node bench/cpuprofile.mjs FILE.cpuprofile [MISSES]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SPECIAL = {
  '(garbage collector)': 'GC',
  '(program)': '(program): V8, libuv, outside JS',
  '(idle)': 'idle',
  '(root)': '(program): V8, libuv, outside JS',
};

/**
 * The steps, by the functions that begin them (`function file`, file as ownFile gives it): a
 * sample is the innermost one's on its stack. Steps run in this order in flow.ts serveApi; the
 * record's hooks (public-app.ts onRequest, onResponse) around them.
 */
const STEPS = [
  ['recv: parse the query, identity, classify', ['recv dist/steps/recv.js', 'noteTarget dist/steps/request-record.js', 'preferenceOf dist/http/codings.js']],
  ['hash: the key', ['hash dist/steps/flow.js', 'cacheKey dist/policy/request.js']],
  [
    'lookup: storage, coalescer, admission',
    [
      'lookup dist/cache/local-storage.js',
      'lookup dist/cache/tiered-storage.js',
      'lookupDecision dist/steps/flow.js',
      'coalesce dist/steps/flow.js',
      'budgetLeft dist/steps/admission.js',
      'begin dist/cache/coalescer.js',
    ],
  ],
  [
    'fetch: ask the wiki (our side), read and inspect its answer',
    [
      'askWiki dist/steps/ask-wiki.js',
      'afterAnswer dist/steps/after-answer.js',
      'wikiRequestHeaders dist/steps/request-record.js',
      'mark dist/cache/local-storage.js',
    ],
  ],
  [
    'store decision: the answer policy, dependencies',
    [
      'AnswerPolicy dist/policy/answer-policy.js',
      'verdict dist/policy/answer-policy.js',
      'responseHeaders dist/policy/answer-policy.js',
      'dependenciesOf dist/policy/dependencies.js',
    ],
  ],
  [
    'store: compress, write the entry',
    [
      'storedForm dist/compression/representations.js',
      'store dist/cache/local-storage.js',
      'store dist/cache/tiered-storage.js',
      'set dist/cache/tier.js',
      'storedHeaders dist/policy/answer-policy.js',
    ],
  ],
  [
    'deliver: headers, the answer written',
    ['deliverAnswer dist/steps/deliver.js', 'deliverEntry dist/steps/deliver.js', 'replyWithError dist/steps/error-reply.js'],
  ],
  [
    'record: access log, metrics',
    ['beginRecord dist/steps/request-record.js', 'finishRecord dist/steps/request-record.js', 'noteOutcome dist/steps/request-record.js'],
  ],
];
const STEP_OF = new Map(STEPS.flatMap(([step, fns]) => fns.map((f) => [f, step])));

/** The step a frame begins, if it is one of STEPS'. */
function stepOfFrame(cf) {
  const file = ownFile(cf.url);
  return file ? STEP_OF.get(`${cf.functionName} ${file}`) : undefined;
}

/** Which group a frame's script belongs to. */
export function groupOf(url) {
  if (url.includes('/node_modules/undici/')) return 'undici';
  if (/\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fast-json-stringify|fast-querystring)/.test(url)) return 'Fastify';
  if (/\/node_modules\/(pino|sonic-boom|thread-stream)/.test(url)) return 'pino';
  if (url.includes('/node_modules/prom-client/')) return 'prom-client';
  if (url.includes('/node_modules/')) return 'other dependencies';
  if (url === 'node:zlib' || url.startsWith('node:internal/zlib')) return 'node:zlib (gzip, gunzip)';
  if (/^node:(net|stream|internal\/stream_base_commons|internal\/streams|internal\/net)/.test(url)) return 'node: sockets and streams';
  if (/^node:(_http|http|internal\/http)/.test(url)) return 'node: http';
  if (url.startsWith('node:')) return 'node: other';
  if (url.includes('/dist/')) return 'wikiedge (dist/)';
  return 'other scripts';
}

/** `dist/steps/flow.js` of a frame's file URL; undefined when it is not one of our modules. */
export function ownFile(url) {
  const at = url.lastIndexOf('/dist/');
  return at < 0 || url.includes('/node_modules/') ? undefined : url.slice(at + 1);
}

/**
 * The summary of `profile` (parsed .cpuprofile): `{ totalUs, idleUs, groups, files, frames }`,
 * each list `[name, selfUs, (onStackUs)]` sorted by time; only the samples taken from `from` to
 * `to` (µs of the monotonic clock the profile's timestamps are in: CLOCK_MONOTONIC, which is
 * also `process.hrtime()`'s, so another process can name a window).
 */
export function summarise(profile, { from = -Infinity, to = Infinity } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // A frame's charge: itself when it has a script (or is one of V8's special frames), else the
  // nearest caller that has one.
  const chargeOf = new Map();
  const charged = (id) => {
    if (chargeOf.has(id)) return chargeOf.get(id);
    const n = byId.get(id);
    const cf = n.callFrame;
    const own = cf.url !== '' || SPECIAL[cf.functionName] !== undefined || !parent.has(id);
    const to = own ? id : charged(parent.get(id));
    chargeOf.set(id, to);
    return to;
  };
  const filesOnStack = new Map();
  const filesOf = (id) => {
    if (filesOnStack.has(id)) return filesOnStack.get(id);
    const up = parent.has(id) ? filesOf(parent.get(id)) : new Set();
    const file = ownFile(byId.get(id).callFrame.url);
    const set = file && !up.has(file) ? new Set([...up, file]) : up;
    filesOnStack.set(id, set);
    return set;
  };
  // The innermost step on a node's stack, else the step flow.ts's own frames stand for, else none.
  const stepOn = new Map();
  const stepOfNode = (id) => {
    if (stepOn.has(id)) return stepOn.get(id);
    const own = stepOfFrame(byId.get(id).callFrame);
    const step = own ?? (parent.has(id) ? stepOfNode(parent.get(id)) : undefined);
    stepOn.set(id, step);
    return step;
  };
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
  const groups = new Map();
  const steps = new Map();
  const selfFiles = new Map();
  const stackFiles = new Map();
  const frames = new Map();
  let totalUs = 0;
  let idleUs = 0;
  const { samples, timeDeltas } = profile;
  let at = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i];
    // The time from this sample to the next (the last one: the profile's end).
    const us = i + 1 < samples.length ? timeDeltas[i + 1] : profile.endTime - at;
    if (!(us > 0) || at < from || at >= to) continue;
    totalUs += us;
    const frame = byId.get(charged(samples[i])).callFrame;
    const special = frame.url === '' ? SPECIAL[frame.functionName] : undefined;
    if (special === 'idle') {
      idleUs += us;
      continue;
    }
    const group = special ?? groupOf(frame.url);
    add(groups, group, us);
    const step = stepOfNode(samples[i]);
    add(
      steps,
      step ??
        (ownFile(frame.url) === 'dist/steps/flow.js'
          ? 'flow.ts: sequencing the steps (serveApi, lookupOrFetch, fetchAndStore)'
          : `no step on the stack: ${group}`),
      us,
    );
    const file = ownFile(frame.url);
    if (file) add(selfFiles, file, us);
    for (const f of filesOf(samples[i])) add(stackFiles, f, us);
    const where = frame.url === '' ? '' : ` ${ownFile(frame.url) ?? frame.url.replace(/^.*\/node_modules\//, '')}:${frame.lineNumber + 1}`;
    add(frames, `${frame.functionName || '(anonymous)'}${where}`, us);
  }
  const sorted = (map) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  const files = [...new Set([...selfFiles.keys(), ...stackFiles.keys()])]
    .map((f) => [f, selfFiles.get(f) ?? 0, stackFiles.get(f) ?? 0])
    .sort((a, b) => b[2] - a[2]);
  return { totalUs, idleUs, groups: sorted(groups), steps: sorted(steps), files, frames: sorted(frames) };
}

/**
 * The summary as printed tables, each figure a share of the busy time; per miss too when
 * `misses` is given. The profiler samples on a wall-clock timer: a process that waits for a CPU
 * (a busy host) has that wait charged to the frame it resumes in, so the busy time can exceed
 * the CPU time. With `cpuUsPerMiss` (the process's CPU per miss from /proc, measured over the same
 * window) the per-miss figures are each share of it; without, busy time ÷ misses.
 */
export function printSummary(summary, { misses, cpuUsPerMiss, top = 25, log = console.log } = {}) {
  const busy = summary.totalUs - summary.idleUs;
  const perMissUs = cpuUsPerMiss ?? (misses ? busy / misses : undefined);
  const pct = (us) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
  const per = (us) => (perMissUs ? `${((us / busy) * perMissUs).toFixed(1).padStart(6)} µs` : '');
  log(
    `  profile window: ${(summary.totalUs / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s, idle ${(summary.idleUs / 1e6).toFixed(2)} s${misses ? `; ${misses} misses, busy ${(busy / misses).toFixed(1)} µs per miss` : ''}${cpuUsPerMiss ? `; per-miss figures below: share × ${cpuUsPerMiss.toFixed(1)} µs of CPU per miss (/proc)` : ''}`,
  );
  log('\n  | group | share of busy | per miss |\n  |---|---|---|');
  for (const [g, us] of summary.groups) log(`  | ${g} | ${pct(us)} | ${per(us)} |`);
  log('\n  | step (innermost on the stack; what runs from an event with no step, by group) | share of busy | per miss |\n  |---|---|---|');
  for (const [st, us] of summary.steps) log(`  | ${st} | ${pct(us)} | ${per(us)} |`);
  log('\n  | our module | self | self per miss | on the stack | on the stack per miss |\n  |---|---|---|---|---|');
  for (const [f, self, stack] of summary.files.filter(([, , s]) => s >= busy / 1000))
    log(`  | ${f} | ${pct(self)} | ${per(self)} | ${pct(stack)} | ${per(stack)} |`);
  log(`\n  | frame (top ${top} by self time, natives charged to their caller) | self | per miss |\n  |---|---|---|`);
  for (const [f, us] of summary.frames.slice(0, top)) log(`  | \`${f}\` | ${pct(us)} | ${per(us)} |`);
}

/**
 * The groups (or, with `rows: 'steps'`, the steps) of several profiles side by side: share of
 * each one's busy time, and µs per miss.
 */
export function printGroups(profiles, { log = console.log, rows = 'groups' } = {}) {
  const groups = [...new Set(profiles.flatMap((p) => p.summary[rows].map(([g]) => g)))];
  const cell = (p, g) => {
    const busy = p.summary.totalUs - p.summary.idleUs;
    const us = p.summary[rows].find(([name]) => name === g)?.[1] ?? 0;
    return `${((100 * us) / busy).toFixed(1)} % · ${((us / busy) * p.cpuUsPerMiss).toFixed(1)} µs`;
  };
  log(
    `  | ${rows === 'steps' ? 'step' : 'group'} | ${profiles.map((p) => `${p.label}: share · per miss`).join(' | ')} |\n  |---|${profiles.map(() => '---|').join('')}`,
  );
  for (const g of groups) log(`  | ${g} | ${profiles.map((p) => cell(p, g)).join(' | ')} |`);
  log(`  | all (CPU per miss, /proc) | ${profiles.map((p) => `${p.cpuUsPerMiss.toFixed(1)} µs`).join(' | ')} |`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, misses] = process.argv.slice(2);
  if (!file) {
    console.error(`usage: node ${path.relative(process.cwd(), process.argv[1])} FILE.cpuprofile [MISSES]`);
    process.exit(2);
  }
  printSummary(summarise(JSON.parse(readFileSync(file, 'utf8'))), { misses: misses ? Number(misses) : undefined });
}
