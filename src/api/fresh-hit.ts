/**
 * vcl_hit's short path. A request whose recv step flow.ts already remembers (a cookie-less,
 * credential-less, body-less GET or HEAD of api.php it has classified before) and whose entry is
 * fresh in this process's shared tier is answered from node:http's request event, before Fastify
 * parses, routes and decorates it: one lookup, the entry's header block built once and replayed,
 * three per-request headers (Age, X-Cache, X-Request-Id), one tally cell. A hit then costs what
 * the cache costs rather than what the framework costs (docs/BENCHMARKS.md, "hit path").
 *
 * It decides nothing of its own: the memo, the key and the freshness are flow.ts's, request.ts's
 * and store.ts's. Whatever it is not sure of goes the full way: anything but a fresh local
 * entry with status 200, a closing server, a long or absolute-form target, a stale or
 * Redis-held entry. The full way would deliver the same entry with the same headers
 * (test/integration/fresh-hit-equivalence.test.ts compares the two).
 */
import { type IncomingMessage, type ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';
import { ageSeconds } from '../cache/freshness.js';
import type { CacheEntry } from '../cache/store.js';
import type { Gateway } from '../gateway.js';
import { requestIdOf } from '../request-id.js';
import type { RequestCell } from '../request-metrics.js';
import { recordFreshHit } from '../request-record.js';
import { keyedHeadersOf, type Recv, rememberedRecv } from './flow.js';
import { cacheKey, type KeyedHeaders } from './request.js';

/**
 * Flat [name, value, …] header blocks, built on an entry's first short-path hit (null: not
 * replayable), ending with the three per-request headers, whose values are written in before
 * each writeHead(). Reusing the array is safe: writeHead() serialises it before it returns and
 * keeps no reference, and nothing runs in between.
 */
const replayHeads = new WeakMap<CacheEntry, string[] | null>();
/** Where the per-request values sit, from the end of a replay head. */
const AGE_FROM_END = 5;
const REQUEST_ID_FROM_END = 1;

/**
 * What a remembered request's hits share, found on its first short-path hit: the cache key for
 * the keyed headers it was made with (rebuilt, and its hash with it, only when they differ:
 * another X-Forwarded-Proto or Origin) and its metrics cell (disposition, module, method, status fixed).
 */
interface HitMemo {
  readonly treatAsUntrusted: string | undefined;
  readonly forwardedProto: string;
  readonly origin: string | undefined;
  readonly key: string;
  readonly cell: RequestCell;
}
const hitMemos = new WeakMap<Recv, HitMemo>();

/** True when the request was answered here; false: nothing was written, take the full path. */
export function serveFreshHit(gw: Gateway, req: IncomingMessage, res: ServerResponse): boolean {
  const startedAt = gw.now();
  const method = req.method;
  const url = req.url;
  // Long targets take the full path, which answers 414 above WIKIEDGE_MAX_URL_BYTES.
  if (method === undefined || url === undefined || url.charCodeAt(0) !== 0x2f || url.length > gw.config.maxUrlBytes / 3)
    return false;
  const recv = rememberedRecv(gw, method, req.headers, url);
  if (!recv || recv.classification.verdict !== 'lookup' || recv.api.identity.kind === 'session') return false;
  const api = recv.api;
  const remote = req.socket.remoteAddress;
  const keyed = keyedHeadersOf(req.headers, remote, gw.trusted.has(remote), api.query);
  const memo = hitMemoOf(gw, recv, method, keyed);
  const entry = gw.store.get('shared', memo.key);
  if (!entry || entry.status !== 200 || gw.store.freshness(entry, startedAt) !== 'fresh') return false;
  const head = replayHead(entry);
  if (!head) return false;

  const reqId = requestIdOf(req.headers);
  head[head.length - AGE_FROM_END] = String(ageSeconds(entry, startedAt));
  head[head.length - REQUEST_ID_FROM_END] = reqId;
  res.writeHead(200, head);
  res.end(entry.body);
  const seconds = (gw.now() - startedAt) / 1000;
  recordFreshHit(gw, memo.cell, seconds, reqId, method, api.target.rawPath, recv.moduleLabel);
  return true;
}

function hitMemoOf(gw: Gateway, recv: Recv, method: string, keyed: KeyedHeaders): HitMemo {
  let memo = hitMemos.get(recv);
  if (
    memo &&
    memo.treatAsUntrusted === keyed.treatAsUntrusted &&
    memo.forwardedProto === keyed.forwardedProto &&
    memo.origin === keyed.origin
  )
    return memo;
  const requests = gw.metrics.requests;
  memo = {
    treatAsUntrusted: keyed.treatAsUntrusted,
    forwardedProto: keyed.forwardedProto,
    origin: keyed.origin,
    key: cacheKey(recv.api.urlKey, recv.api.identity, keyed),
    cell: memo?.cell ?? requests.cell('hit', recv.moduleLabel, gw.metrics.method(method), 200),
  };
  hitMemos.set(recv, memo);
  return memo;
}

/**
 * What the full path sends for an entry besides the per-request headers: the stored headers,
 * the Content-Type Fastify would default a Buffer to, and the body's Content-Length.
 */
function replayHead(entry: CacheEntry): string[] | null {
  let head = replayHeads.get(entry);
  if (head !== undefined) return head;
  const flat: string[] = [];
  let typed = false;
  try {
    for (const name in entry.headers) {
      const value = entry.headers[name]!;
      if (name === 'content-length') continue; // the body's own length is sent below
      if (name === 'content-type') typed = true;
      for (const v of Array.isArray(value) ? value : [value]) {
        validateHeaderName(name);
        validateHeaderValue(name, v);
        flat.push(name, v);
      }
    }
    head = [
      ...flat,
      ...(typed ? [] : ['content-type', 'application/octet-stream']),
      'content-length',
      String(entry.body.length),
      // Written in per request (AGE_FROM_END, REQUEST_ID_FROM_END).
      'age',
      '0',
      'x-cache',
      'hit',
      'x-request-id',
      '',
    ];
  } catch {
    // A header Node would refuse: leave the entry to the full path, which reports it.
    head = null;
  }
  replayHeads.set(entry, head);
  return head;
}
