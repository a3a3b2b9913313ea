/**
 * vcl_hit's short path. A request whose recv step the full path already remembers (recv.ts: a
 * cookie-less, credential-less, body-less GET or HEAD of api.php it has classified before) and
 * whose entry is fresh in this process's shared tier is answered from node:http's request
 * event, before Fastify parses, routes and decorates it. A hit then costs what the cache costs
 * rather than what the framework costs (docs/BENCHMARKS.md, "hit path").
 *
 * It only remembers decisions the full path made:
 * - the recv step (recv.ts rememberedRecv), its classification included;
 * - the key (request.ts cacheKey), rebuilt only when the keyed headers differ
 *   (request.ts sameKeyedHeaders walks the same field list as the key, held equal to
 *   KeyedHeaders by the compiler);
 * - freshness (the store's);
 * - the coding (http/codings.ts preferenceOf, remembered per Accept-Encoding value) and the
 *   representation: a stored form (gzip, br) as it is, or the answer (decoded, and kept, by
 *   compression/representations.ts); nothing is compressed here but the gzip of an entry stored
 *   as it is, made once for the first client that takes it (representations.ts gzipFirst);
 * - the headers an entry goes out with (deliver.ts entryHeaders and PER_REQUEST_HEADERS), laid
 *   out once per entry and coding as the flat array writeHead takes.
 * Whatever it is not sure of goes the full way: anything but a fresh local entry of an
 * anonymous lookup, a closing server, a long or absolute-form target, a header Node would refuse,
 * a coding that would have to be made (406 included), a large answer not yet decoded.
 * test/in-process/fresh-hit-equivalence.test.ts compares what both paths send.
 */
import { type IncomingMessage, type ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';
import { ageSeconds } from '../policy/freshness.js';
import type { CacheEntry } from '../cache/entry.js';
import type { Gateway } from '../gateway/gateway.js';
import { headerString, requestIdOf } from '../http/forwarding.js';
import type { RequestCell } from '../observe/request-metrics.js';
import type { Metrics } from '../observe/metrics.js';
import { recordFreshHit } from './request-record.js';
import { targetTooLong } from '../words/target.js';
import { type Coding, preferenceOf } from '../http/codings.js';
import { codingFor, entryHeaders, PER_REQUEST, PER_REQUEST_HEADERS, stored } from './deliver.js';
import { keyedHeadersOf, type Recv, rememberedRecv } from './recv.js';
import { cacheKey, type KeyedHeaders, sameKeyedHeaders } from '../policy/request.js';
import { storeCharge } from './store-charge.js';

/**
 * The methods this path can answer (a remembered recv is a GET or HEAD's). Its callers test it
 * first: a POST, a PURGE or a PUT goes straight to the router without a call into this file.
 */
export const SHORT_PATH_METHODS: ReadonlySet<string | undefined> = new Set(['GET', 'HEAD']);

/** The disposition of every answer this path sends. */
const FRESH_HIT = 'hit';
/** The status of every answer this path sends. */
const STORED_STATUS = 200;

/**
 * Flat [name, value, …] header blocks, built on an entry's first short-path hit (null: not
 * replayable), ending with the per-request headers, whose values are written in before each
 * writeHead(). Reusing the array is safe: writeHead() serialises it before it returns and keeps
 * no reference, and nothing runs in between.
 */
const replayHeads = new WeakMap<CacheEntry, Partial<Record<Coding, string[] | null>>>();
/** Where the per-request values sit, from the end of a replay head (PER_REQUEST_HEADERS' order). */
const AGE_FROM_END = 5;
const X_CACHE_FROM_END = 3;
const REQUEST_ID_FROM_END = 1;

/**
 * What a remembered request's hits share, found on its first short-path hit: the cache key for
 * the keyed headers it was made with (rebuilt, and its hash with it, only when they differ:
 * another X-Forwarded-Proto or Origin) and its metrics cell.
 */
interface HitMemo {
  readonly keyed: KeyedHeaders;
  readonly key: string;
  /** The cell of this path's hits: only 200s are stored (policy.ts evaluateAnswer). */
  readonly cell: RequestCell;
}
const hitMemos = new WeakMap<Recv, HitMemo>();

/** True when the request was answered here; false: nothing was written, take the full path. */
export function serveFreshHit(gw: Gateway, req: IncomingMessage, res: ServerResponse): boolean {
  const startedAt = gw.now();
  const method = req.method;
  const url = req.url;
  // Absolute-form and long targets take the full path (which answers 414 past the limit).
  if (method === undefined || url === undefined || url.charCodeAt(0) !== 0x2f || targetTooLong(url, gw.config.maxUrlBytes)) return false;
  const recv = rememberedRecv(gw, method, req.headers, url);
  if (!recv || recv.classification.verdict !== 'lookup' || recv.api.identity.kind !== 'anonymous') return false;
  const api = recv.api;
  const remote = req.socket.remoteAddress;
  // No header is named in Connection here (rememberedRecv): the raw headers are what the wiki sees.
  const keyed = keyedHeadersOf(req.headers, remote, gw.trusted.has(remote), api.query);
  let memo = hitMemos.get(recv);
  if (!memo || !sameKeyedHeaders(memo.keyed, keyed)) memo = remember(gw.metrics, recv, method, keyed, memo);
  let entry = gw.store.get('shared', memo.key);
  // Anything but a 200 (none is stored today) goes the full way, which counts it as it is.
  if (!entry || entry.status !== STORED_STATUS || gw.store.freshness(entry, startedAt) !== 'fresh') return false;
  const preference = preferenceOf(req.headers['accept-encoding']);
  if (preference === 'not-acceptable') return false;
  // The first client that takes the gzip of an entry stored as it is has it made (once, as
  // flow.ts would: representations.ts gzipFirst); one too large to compress here goes the full way.
  if (gw.compression.gzipWanted(entry, preference)) {
    entry = gw.compression.gzipFirst('shared', memo.key, entry);
    if (!entry) return false;
  }
  const coding = codingFor(entry, preference);
  if (!stored(entry, coding)) return false;
  const head = replayHead(entry, coding);
  if (!head) return false;
  // HEAD needs no body (and an identity HEAD of a gzip entry no decoding).
  const body = method === 'HEAD' ? undefined : gw.compression.ready(entry, coding);
  if (body === undefined && method !== 'HEAD') return false;
  // A br client sent something else: counts towards the entry's br (representations.ts).
  // The hit that completes the count has its br made, charged to its client's store budget (steps/store-charge.ts).
  if (preference[0] === 'br' && coding !== 'br' && gw.compression.wantBrotli(entry))
    gw.compression.makeBrotli('shared', memo.key, entry, storeCharge(gw, remote, headerString(req.headers['x-forwarded-for']), recv.api.identity, 'shared'));

  const reqId = requestIdOf(req.headers, remote, gw.trusted);
  head[head.length - AGE_FROM_END] = String(ageSeconds(entry, startedAt));
  head[head.length - REQUEST_ID_FROM_END] = reqId;
  res.writeHead(entry.status, head);
  res.end(body);
  gw.compression.metrics.served(coding, body?.length ?? 0);
  recordFreshHit(gw, req, memo.cell, api.target, (gw.now() - startedAt) / 1000, reqId, entry.status);
  return true;
}

function remember(metrics: Metrics, recv: Recv, method: string, keyed: KeyedHeaders, previous: HitMemo | undefined): HitMemo {
  const memo: HitMemo = {
    keyed,
    key: cacheKey(recv.api.urlKey, recv.api.identity, keyed),
    cell: previous?.cell ?? metrics.requests.cell(FRESH_HIT, recv.moduleLabel, metrics.method(method), STORED_STATUS),
  };
  hitMemos.set(recv, memo);
  return memo;
}

/** deliver.ts entryHeaders as the flat array writeHead takes, then the per-request headers. */
function replayHead(entry: CacheEntry, coding: Coding): string[] | null {
  let byCoding = replayHeads.get(entry);
  let head = byCoding?.[coding];
  if (head !== undefined) return head;
  const flat: string[] = [];
  try {
    const headers = entryHeaders(entry, coding);
    for (const name in headers) {
      // Ours come last (a wiki behind another cache sends its own Age, X-Cache).
      if (PER_REQUEST.has(name)) continue;
      const value = headers[name]!;
      for (const v of Array.isArray(value) ? value : [value]) {
        validateHeaderName(name);
        validateHeaderValue(name, v);
        flat.push(name, v);
      }
    }
    for (const name of PER_REQUEST_HEADERS) flat.push(name, '');
    flat[flat.length - X_CACHE_FROM_END] = FRESH_HIT;
    head = flat;
  } catch {
    // A header Node would refuse: leave the entry to the full path, which reports it.
    head = null;
  }
  if (!byCoding) replayHeads.set(entry, (byCoding = {}));
  byCoding[coding] = head;
  return head;
}
