// Which source files of the gateway one request runs code in, per kind of request (a miss, a
// fresh hit, a logged-in miss, a pass), and how often its calls go from a lower layer into a
// higher one: the "files a request's path enters" of docs/ARCHITECTURE.md "A request's path".
//   node bench/request-path.mjs [--baseline <git-ref>] [--settle <ms>]
//
// The gateway (dist/main.js) runs as a child with the inspector on a loopback port, in front of
// a stand-in wiki served here with bench/servers/miss-api.mjs's answer and headers (public JSON
// for an anonymous request, private for a session cookie) and the namespaces the gateway's
// learner asks for. The upstream probe is set to 10 minutes, out of the run. After three warm-up
// requests of every kind, each kind is measured on two requests, and once on no request (what
// timers run by themselves):
//   - files, on the first: V8's precise coverage (Profiler.startPreciseCoverage, callCount, not
//     detailed). Each Profiler.takePreciseCoverage returns the calls since the previous take (V8
//     resets the counters; inlined calls are counted), so a take just before the request and one
//     after it give the functions called in between. A dist/ file counts when one of its functions
//     was called; it is named by its src/*.ts. The second take is --settle ms (default 500) after
//     the answer's last byte: the store that runs after the answer, the request's record and the
//     access log's batch are part of the request's path. The fresh hit asks for the measured miss's
//     URL, the first time after it.
//   - calls up a layer, on the second (a new URL for a miss, the same for a hit): a breakpoint on
//     the first breakable position of every function of dist/ compiled by the end of the warm-up
//     (Debugger.getPossibleBreakpoints restricted to the function), active for this request only,
//     whose window is lengthened by twice its answer's time (the pauses slow it). At each hit the
//     caller is the nearest frame of dist/ below it on the synchronous stack (frames of Node and of
//     libraries skipped: an EventEmitter's listener, a callback through undici). A call goes up
//     when the callee's file sits in a higher layer than the caller's. Code run after an await, by
//     a timer or an I/O callback has no caller of ours and counts as neither. Layers are each
//     build's own: the upward rules ("x-not-to-y") of its .dependency-cruiser.cjs, lowest first;
//     a call from or to a file in no layer (src/main.ts) is not counted. Each function's hits are
//     compared with its coverage count over the same window: the difference is printed as unseen
//     (an async function's resumption after an await counts as a call in coverage and hits no
//     breakpoint).
//
// --baseline <ref> builds that ref in a temporary git worktree (bench/baseline.mjs) and measures
// it the same way, side by side with this tree's build.
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { request, WebSocket } from 'undici';
import { createServer } from 'node:http';
import { prepareBaseline } from './baseline.mjs';
import { freePort, gateway, root, stopProcess } from './harness.mjs';
import { hasSession, missAnswer, PRIVATE, PUBLIC } from './servers/miss-api.mjs';

const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const SETTLE_MS = Number(option('--settle') ?? 500);
const SESSION = 'wiki_session=' + 'a1b2c3d4'.repeat(4);
// A page's revisions: cached for the public TTL (siteinfo's general part reads the wiki's clock and
// is kept for 2 s only, less than a traced request may take).
const QUERY = '/w/api.php?action=query&prop=revisions&format=json&titles=Page_';

/** The kinds of request measured, in this order; `n` makes each one's URL new. */
const KINDS = [
  { name: 'miss', send: (gw, n) => get(gw, `${QUERY}${n}`) },
  { name: 'fresh hit', send: (gw, n) => get(gw, `${QUERY}${n}`), same: true },
  { name: 'logged-in miss', send: (gw, n) => get(gw, `${QUERY}${n}`, { cookie: SESSION }) },
  {
    name: 'pass (POST action=purge)',
    send: (gw, n) =>
      get(gw, '/w/api.php', {
        method: 'POST',
        'content-type': 'application/x-www-form-urlencoded',
        body: `action=purge&titles=Purged_${n}&format=json`,
      }),
  },
];

async function get(gw, pathAndQuery, { method = 'GET', body, ...headers } = {}) {
  const res = await request(`${gw.url}${pathAndQuery}`, { method, headers, body });
  await res.body.dump();
  return `${res.statusCode} ${res.headers['x-cache'] ?? '-'}`;
}

/**
 * bench/servers/miss-api.mjs's answers and headers (public for an anonymous request, private for a
 * session), served here, and the wiki's namespaces for the gateway's learner (which would
 * otherwise ask again every 5 s, in the middle of a window).
 */
async function standIn() {
  const body = missAnswer();
  const namespaces = Buffer.from(
    JSON.stringify({
      batchcomplete: true,
      query: { namespaces: { 0: { id: 0, name: '' }, 1: { id: 1, name: 'Talk', canonical: 'Talk' } }, namespacealiases: [] },
    }),
  );
  const server = createServer((req, res) => {
    if (req.url.includes('siprop=namespaces')) return res.writeHead(200, PUBLIC).end(namespaces);
    res.writeHead(200, hasSession(req.headers.cookie) ? PRIVATE : PUBLIC).end(body);
  });
  server.keepAliveTimeout = 65_000; // as miss-api's: a traced request holds a connection idle for seconds
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A Chrome DevTools Protocol client of the inspector listening on `port`. */
async function devtools(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 0;
  const pending = new Map();
  const listeners = new Map();
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    if (m.id === undefined) return listeners.get(m.method)?.(m.params);
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p.reject(new Error(`${p.method}: ${m.error.message}`));
    else p.resolve(m.result);
  };
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        pending.set(id, { resolve, reject, method });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    on: (method, fn) => listeners.set(method, fn),
    close: () => ws.close(),
  };
}

/**
 * The layers of the build in `dir`, lowest first, read back from the upward rules of its
 * .dependency-cruiser.cjs (a layer has one "x-not-to-y" rule per layer above it).
 */
function layersOf(dir) {
  const config = createRequire(path.join(dir, 'package.json'))(path.join(dir, '.dependency-cruiser.cjs'));
  const layers = new Map();
  for (const rule of config.forbidden) {
    const m = /^(.+)-not-to-(.+)$/.exec(rule.name);
    if (!m) continue;
    const from = layers.get(m[1]) ?? { name: m[1], path: new RegExp(rule.from.path), above: 0 };
    from.above++;
    layers.set(m[1], from);
    if (!layers.has(m[2])) layers.set(m[2], { name: m[2], path: new RegExp(rule.to.path), above: 0 });
  }
  const ordered = [...layers.values()].sort((a, b) => b.above - a.above);
  /** A src/ file's layer: its name and rank (0 the lowest). */
  return (file) => {
    const at = ordered.findIndex((l) => l.path.test(file));
    if (at >= 0) return { name: ordered[at].name, rank: at };
    // A file its build's rules put in no layer (the entry point, or a file the rules missed) has
    // no place to go up from or to.
    return { name: '(no layer)', rank: Infinity };
  };
}

/** Everything measured of one build (`dir` its tree, `main` its dist/main.js). */
async function measure({ dir, main, label }) {
  const distUrl = pathToFileURL(path.join(dir, 'dist')).href + '/';
  const layerOf = layersOf(dir);
  const srcOf = (url) => {
    const rel = url.slice(distUrl.length);
    const ts = `src/${rel.replace(/\.js$/, '.ts')}`;
    return existsSync(path.join(dir, ts)) ? ts : `dist/${rel}`;
  };

  const upstream = await standIn();
  const upstreamPort = upstream.address().port;
  const inspectPort = await freePort();
  // The upstream probe would run in a window: put it out of reach of this short run.
  const gw = await gateway(
    `http://127.0.0.1:${upstreamPort}`,
    { WIKIEDGE_UPSTREAM_PROBE_MS: '600000' },
    {
      main,
      cpu: null,
      nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
    },
  );
  const cdp = await devtools(inspectPort);
  const scripts = new Map(); // scriptId -> url, for dist/ only
  cdp.on('Debugger.scriptParsed', (s) => {
    if (s.url.startsWith(distUrl)) scripts.set(s.scriptId, s.url);
  });
  await cdp.send('Debugger.enable');
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

  let n = 0;
  for (let round = 0; round < 3; round++) for (const kind of KINDS) await kind.send(gw, kind.same ? n : ++n);
  await sleep(SETTLE_MS);

  // Every pause resumes at once, those of the breakpoints being set too (a timer may hit one).
  const fnOfBreakpoint = new Map();
  const functionKey = (url, range) => `${url}#${range.startOffset}`;
  let traced;
  cdp.on('Debugger.paused', ({ hitBreakpoints = [], callFrames }) => {
    for (const id of hitBreakpoints) {
      const fn = fnOfBreakpoint.get(id);
      if (!fn || !traced) continue;
      traced.hits.set(fn.key, (traced.hits.get(fn.key) ?? 0) + 1);
      const caller = callFrames.slice(1).find((f) => scripts.has(f.location.scriptId));
      if (!caller) continue;
      const from = srcOf(scripts.get(caller.location.scriptId));
      if (from === fn.file) continue;
      traced.crossings++;
      const [up, down] = [layerOf(fn.file).rank, layerOf(from).rank];
      if (Number.isFinite(up) && Number.isFinite(down) && up > down) {
        traced.upward++;
        const edge = `${from} -> ${fn.file}`;
        traced.edges.set(edge, (traced.edges.get(edge) ?? 0) + 1);
      }
    }
    void cdp.send('Debugger.resume');
  });

  // A breakpoint on the first statement of every function V8 has compiled in dist/, inactive
  // while files are counted.
  await cdp.send('Debugger.setBreakpointsActive', { active: false });
  for (const script of (await cdp.send('Profiler.takePreciseCoverage')).result) {
    if (!scripts.has(script.scriptId)) continue;
    const { scriptSource } = await cdp.send('Debugger.getScriptSource', { scriptId: script.scriptId });
    const lineStarts = [0];
    for (let i = 0; i < scriptSource.length; i++) if (scriptSource.charCodeAt(i) === 10) lineStarts.push(i + 1);
    const at = (offset) => {
      let lo = 0;
      let hi = lineStarts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (lineStarts[mid] <= offset) lo = mid;
        else hi = mid - 1;
      }
      return { scriptId: script.scriptId, lineNumber: lo, columnNumber: offset - lineStarts[lo] };
    };
    for (const fn of script.functions) {
      const [range] = fn.ranges;
      if (range.startOffset === 0) continue; // the module's top level
      const { locations } = await cdp.send('Debugger.getPossibleBreakpoints', {
        start: at(range.startOffset),
        end: at(range.endOffset),
        restrictToFunction: true,
      });
      if (locations.length === 0) continue;
      const { breakpointId } = await cdp.send('Debugger.setBreakpoint', { location: locations[0] });
      fnOfBreakpoint.set(breakpointId, { key: functionKey(script.url, range), file: srcOf(script.url) });
    }
  }

  /** The functions called since the previous take, by key, and the files they are in. */
  const called = async () => {
    const counts = new Map();
    const files = new Set();
    for (const script of (await cdp.send('Profiler.takePreciseCoverage')).result) {
      if (!scripts.has(script.scriptId)) continue;
      for (const fn of script.functions) {
        const [range] = fn.ranges;
        if (range.count === 0 || range.startOffset === 0) continue;
        counts.set(functionKey(script.url, range), { count: range.count, name: `${srcOf(script.url)} ${fn.functionName || '(anonymous)'}` });
        files.add(srcOf(script.url));
      }
    }
    return { counts, files: [...files].sort() };
  };

  /**
   * One kind of request, or none: the files of one request with the breakpoints inactive, then
   * the calls of a second one of the same kind with them active (its settle lengthened by twice
   * the time its answer took, as the pauses slow it down).
   */
  const measureKind = async (act) => {
    await called();
    const answer = await act();
    await sleep(SETTLE_MS);
    const { files } = await called();
    await cdp.send('Debugger.setBreakpointsActive', { active: true });
    traced = { hits: new Map(), crossings: 0, upward: 0, edges: new Map() };
    const began = Date.now();
    const tracedAnswer = await act();
    await sleep(SETTLE_MS + 2 * (Date.now() - began));
    const t = traced;
    traced = undefined;
    await cdp.send('Debugger.setBreakpointsActive', { active: false });
    const second = await called();
    const unseen = new Map();
    for (const [key, { count, name }] of second.counts) {
      const missed = count - (t.hits.get(key) ?? 0);
      if (missed > 0) unseen.set(name, (unseen.get(name) ?? 0) + missed);
    }
    const sameFiles = second.files.join() === files.join();
    return { answer, tracedAnswer, files, tracedFiles: second.files, sameFiles, upward: t.upward, crossings: t.crossings, edges: t.edges, unseen };
  };

  // The fresh hit asks for the URL of the miss measured just before it.
  const results = [];
  let missed;
  for (const kind of KINDS) {
    const first = kind.same ? missed : ++n;
    const second = kind.same ? missed : ++n;
    missed ??= first;
    let turn = 0;
    results.push({ kind: kind.name, ...(await measureKind(() => kind.send(gw, turn++ === 0 ? first : second))) });
  }
  results.push({ kind: `no request (${SETTLE_MS} ms)`, ...(await measureKind(async () => '-')) });
  cdp.close();
  await stopProcess(gw.child);
  upstream.close();
  return { label, layerOf, results, breakpoints: fnOfBreakpoint.size };
}

const unseenCount = (r) => [...r.unseen.values()].reduce((a, b) => a + b, 0);

function printBuild(b) {
  console.log(`\n## ${b.label}: ${b.breakpoints} functions with a breakpoint\n`);
  for (const r of b.results) {
    console.log(
      `### ${r.kind}: ${r.answer}; ${r.files.length} files; the traced one (${r.tracedAnswer}): ${r.crossings} calls from one file into another, ${r.upward} of them up a layer`,
    );
    const byLayer = new Map();
    for (const f of r.files) {
      const { name, rank } = b.layerOf(f);
      const at = byLayer.get(name) ?? { rank, files: [] };
      at.files.push(f.replace(/^src\//, ''));
      byLayer.set(name, at);
    }
    for (const [name, { files }] of [...byLayer].sort((x, y) => x[1].rank - y[1].rank)) console.log(`  ${name} (${files.length}): ${files.join(', ')}`);
    if (r.edges.size) console.log(`  up a layer: ${[...r.edges].map(([e, c]) => `${e} (${c})`).join('; ')}`);
    if (r.unseen.size) console.log(`  calls the breakpoints did not see: ${[...r.unseen].map(([f, c]) => `${f} (${c})`).join('; ')}`);
    if (!r.sameFiles) {
      const only = (a, b) => a.filter((f) => !b.includes(f)).join(', ') || 'none';
      console.log(`  files of the traced request only: ${only(r.tracedFiles, r.files)}; of the counted one only: ${only(r.files, r.tracedFiles)}`);
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const builds = [
    {
      dir: root,
      main: path.join(root, 'dist/main.js'),
      label: `this tree (${readFileSync(path.join(root, 'dist/build-info.json'), 'utf8').match(/"commit":"(\w{7})/)?.[1] ?? '?'})`,
    },
  ];
  const ref = option('--baseline');
  if (ref) {
    const base = prepareBaseline(ref);
    builds.push({ dir: path.dirname(path.dirname(base.main)), main: base.main, label: `baseline ${base.label}` });
  }
  const measured = [];
  for (const b of builds) measured.push(await measure(b));
  console.log(`\n# files a request's path enters (settle ${SETTLE_MS} ms)\n`);
  console.log(`| request | ${measured.map((b) => `${b.label}: answer · files · calls up a layer`).join(' | ')} |`);
  console.log(`|---|${measured.map(() => '---|').join('')}`);
  for (let i = 0; i < measured[0].results.length; i++)
    console.log(
      `| ${measured[0].results[i].kind} | ${measured.map((b) => `${b.results[i].answer} · ${b.results[i].files.length} · ${b.results[i].upward}${unseenCount(b.results[i]) ? ` (+${unseenCount(b.results[i])} calls unseen)` : ''}`).join(' | ')} |`,
    );
  for (const b of measured) printBuild(b);
  process.exit(0);
}
