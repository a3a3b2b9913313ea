// ns per call of the small pieces of the miss path's own code, in one process, against a build
// (dist/ by default; MICRO_DIST=<dir> for another, e.g. a copy of dist/ built from an older
// commit, to compare). The whole miss bench (bench/miss-throughput.mjs) needs an idle machine;
// this one does not: each case is timed in BENCH_MICRO_RUNS (7) runs after a warm-up, and the
// median is printed.
//   npm run build && node bench/micro-miss.mjs [case ...]
import path from 'node:path';
import { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.env.MICRO_DIST ?? path.join(root, 'dist'));
const RUNS = Number(process.env.BENCH_MICRO_RUNS ?? 7);
const load = (file) => import(path.join(dist, file));

const { identityFromHeaders, identityRules } = await load('mediawiki/identity.js');
const { parsePhpQuery } = await load('mediawiki/php-input.js');
const { compactModules, sharedHeaders } = await load('cache/compact.js');
const { AccessLog } = await load('observe/access-log.js');
const { requesterAddressForms } = await load('mediawiki/requester-address.js');
const { AnswerPolicy } = await load('policy/answer-policy.js');
const { recv } = await load('steps/recv.js');
const { canonicalQuery, modulesOf } = await load('policy/request.js');
const { Tiered } = await load('cache/tier.js');
const { parseTarget } = await load('words/target.js');
const { moduleLabeller } = await load('observe/metrics.js');

/** Median ns per call of `fn(i)` over RUNS runs of `n` calls, after one warm-up run. */
function time(n, fn) {
  const runs = [];
  for (let r = 0; r <= RUNS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    const ns = Number(process.hrtime.bigint() - start) / n;
    if (r > 0) runs.push(ns);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)];
}

const rules = identityRules({ cookiePrefix: 'wiki', sessionName: '', sessionJwtCookie: false, secret: Buffer.alloc(32, 1) });
/** Headers of a miss of bench/miss-throughput.mjs as the recv step sees them (no cookie). */
const anonymousHeaders = { host: '127.0.0.1:8080', 'user-agent': 'wrk', accept: '*/*' };
/** The same with the logged-in section's session cookie. */
const sessionHeaders = { ...anonymousHeaders, cookie: `wiki_session=${'b'.repeat(32)}; wikiUserName=LabUser; wikiUserID=3` };
const query = parsePhpQuery('action=query&meta=siteinfo&format=json&requestid=abc123');
/** The stored headers of that bench's answer (bench/servers/miss-api.mjs), as the flow stores them. */
const storedHeaders = (second) => ({
  'x-content-type-options': 'nosniff',
  'content-type': 'application/json; charset=utf-8',
  'x-frame-options': 'DENY',
  'content-disposition': 'inline; filename=api-result.json',
  vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  expires: `Thu, 01 Jan 1970 00:00:${String(second % 60).padStart(2, '0')} GMT`,
  'cache-control': 's-maxage=3600, max-age=0, public',
});
/** A destination that drops the lines: only the line's making is timed. */
const sink = { write: () => true };
const log = AccessLog.configure(pino({ base: { service: 'wikiedge' } }, sink), { format: 'json', file: '' });
const facts = (i) => ({
  reqId: `req-${i}`,
  method: 'GET',
  target: `/w/api.php?action=query&meta=siteinfo&format=json&requestid=${i}`,
  path: '/w/api.php',
  module: 'query+siteinfo',
  disposition: 'miss',
  status: 200,
  seconds: 0.000734,
  client: '127.0.0.1',
  userAgent: 'wrk',
  bytesIn: 120,
  bytesOut: 2400,
  host: '127.0.0.1:8080',
  httpVersion: '1.1',
  upstreamMs: 0.4,
});

/** That answer's headers as undici gives them to the flow. */
const upstreamHeaders = () => ({
  'x-content-type-options': 'nosniff',
  'content-type': 'application/json; charset=utf-8',
  'x-frame-options': 'DENY',
  'content-disposition': 'inline; filename=api-result.json',
  vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  expires: 'Thu, 01 Jan 1970 00:00:01 GMT',
  'cache-control': 's-maxage=3600, max-age=0, public',
  'content-length': '2127',
  date: 'Sun, 29 Nov 2026 03:00:00 GMT',
  connection: 'keep-alive',
  'keep-alive': 'timeout=5',
});
const anonymous = identityFromHeaders(anonymousHeaders, query, rules);
const policyContext = {
  requester: anonymous,
  rule: {},
  probed: true,
  path: 'store',
  defaults: { ttlPublicSeconds: 3600, ttlSessionSeconds: 300 },
  settings: { ttlMaxSeconds: 86_400, ttlJitterRatio: 0.1, ttlClockSeconds: 5, maxEntryBytes: 1 << 20 },
  random: Math.random,
};
const bodyFacts = {
  complete: true,
  bodyBytes: 2127,
  debuginfoKept: false,
  echoesCredentials: false,
  holdsRequesterAddress: false,
  fetchedWithClientCookies: false,
};
const noDependencies = () => ({ clock: false, tags: ['*'], invalidatedMeanwhile: false });

/** cluster/generations.ts serve(): a request counted until its response closes, each way. */
const generation = { inFlight: 0, idle: undefined };
const answered = () => {
  if (--generation.inFlight === 0) generation.idle?.();
};
const closeCounted = (listen) => () => {
  const res = new ServerResponse(new IncomingMessage(null));
  generation.inFlight++;
  listen(res);
  res.emit('close');
};

/** What the recv step reads of the gateway, as gateway/gateway.ts builds it with no module rules. */
const recvParts = {
  identityRules: rules,
  config: { modules: {}, apiPath: '/w/api.php' },
  metrics: { unknownCredentials: { inc() {} } },
  moduleLabel: moduleLabeller([]),
};
/** The bench's URLs, each new: its requests never find their recv step remembered. */
const missTargets = Array.from({ length: 65_536 }, (_, i) => parseTarget(`/w/api.php?action=query&meta=siteinfo&format=json&requestid=m${i}`));
const missRequest = { method: 'GET', headers: anonymousHeaders };

/** A tier of 64 MiB, full of the bench's entries after its warm-up run: every set evicts. */
const tier = new Tiered('shared', 64 * 1024 * 1024, { maxEntries: 1_000_000 });
const gzipBody = Buffer.alloc(1100, 7);
const sharedSet = (i) => {
  const urlKey = `/w/api.php?action=query&format=json&meta=siteinfo&requestid=t${i}`;
  return tier.set(
    `${urlKey}\nanon\n=http\n-\n-`,
    {
      status: 200,
      headers: storedHeaders(i >> 10),
      body: gzipBody,
      coding: 'gzip',
      identityBytes: 2127,
      storedAt: 1_764_385_200_000,
      ttlMs: 3_600_000,
      urlKey,
      modules: ['query', 'siteinfo'],
      slot: undefined,
      deps: ['*'],
    },
    1_764_385_200_000,
  );
};

const cases = {
  modulesOf: () => time(200_000, () => modulesOf(query)),
  // A stored entry's module list and its dependency tags, as tier.ts set() shares them.
  compactModules: () =>
    time(200_000, () => {
      compactModules(['query', 'siteinfo']);
      return compactModules(['*']);
    }),
  tierSet: () => time(50_000, sharedSet),
  canonicalQuery: () => time(200_000, () => canonicalQuery(query)),
  recvMiss: () => time(50_000, (i) => recv(recvParts, missRequest, missTargets[i & 65_535])),
  // Both include making the ServerResponse: only their difference is the listener's cost.
  closeOnceClosure: () =>
    time(
      100_000,
      closeCounted((res) =>
        res.once('close', () => {
          if (--generation.inFlight === 0) generation.idle?.();
        }),
      ),
    ),
  closeOnShared: () =>
    time(
      100_000,
      closeCounted((res) => res.on('close', answered)),
    ),
  // A miss's policy, as flow.ts asks it: the verdict, the client's headers, the stored ones.
  answerPolicy: () =>
    time(100_000, () => {
      const policy = new AnswerPolicy({ status: 200, headers: upstreamHeaders() }, policyContext);
      policy.verdict(bodyFacts, noDependencies, 1_764_385_200_000);
      policy.responseHeaders();
      return policy.storedHeaders('gzip');
    }),
  identityFromHeaders: () => time(200_000, () => identityFromHeaders(anonymousHeaders, query, rules)),
  identityFromHeadersSession: () => time(50_000, () => identityFromHeaders(sessionHeaders, query, rules)),
  // A new header set every 1,000 calls (a new Expires second), as under load.
  sharedHeaders: () => {
    const sets = Array.from({ length: 64 }, (_, s) => storedHeaders(s));
    return time(200_000, (i) => sharedHeaders(sets[(i >> 10) & 63]));
  },
  accessLogRequest: () => time(100_000, (i) => log.request(facts(i))),
  // The X-Forwarded-For the gateway sends for that bench's client, and for a client behind a proxy.
  requesterAddressForms: () => time(200_000, () => requesterAddressForms('127.0.0.1')),
  requesterAddressFormsProxied: () => time(200_000, () => requesterAddressForms('203.0.113.7, 10.0.0.1')),
};

const wanted = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(cases);
console.log(`dist: ${dist}`);
for (const name of wanted) console.log(`${name.padEnd(24)} ${cases[name]().toFixed(0).padStart(7)} ns/call`);
