/**
 * vcl_deliver: the one place that says what an api.php answer goes out with, for the full path
 * (Fastify) and the fresh-hit path (fresh-hit.ts) alike.
 *
 * - A stored entry goes out with entryHeaders(entry): its stored headers, the Content-Type
 *   Fastify gives a Buffer when none is set, and the body's Content-Length. Computed once per
 *   entry (it never changes: entries are replaced, not edited).
 * - Every answer then gets the per-request headers: Age (cached answers), X-Cache (the
 *   disposition), X-Request-Id.
 * - A requester that carries credentials is never told an answer is public
 *   (policy.ts requesterCacheControl).
 * - An answer fetched just now goes out with the client's headers (policy.ts responseHeaders)
 *   and the Set-Cookie lines the client may see.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ageSeconds } from '../cache/freshness.js';
import type { CacheEntry } from '../cache/entry.js';
import { headerString } from '../forwarding.js';
import type { Identity } from '../identity.js';
import type { Disposition } from '../outcomes.js';
import { requesterCacheControl } from './policy.js';

/** What the wiki answered, ready to deliver: headers already rewritten for the client. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly setCookies: readonly string[];
  readonly body: Buffer | NodeJS.ReadableStream;
}

/** The Content-Type Fastify sends for a Buffer body without one (fastify/lib/reply.js). */
const BUFFER_CONTENT_TYPE = 'application/octet-stream';

const entryHeaderCache = new WeakMap<CacheEntry, Readonly<Record<string, string | string[]>>>();

/** The headers an entry goes out with besides the per-request ones (see the module comment). */
export function entryHeaders(entry: CacheEntry): Readonly<Record<string, string | string[]>> {
  let headers = entryHeaderCache.get(entry);
  if (headers) return headers;
  const out: Record<string, string | string[]> = {};
  for (const name in entry.headers) {
    // The body's own length is sent below.
    if (name !== 'content-length') Object.defineProperty(out, name, { value: entry.headers[name]!, enumerable: true, writable: true });
  }
  if (out['content-type'] === undefined) out['content-type'] = BUFFER_CONTENT_TYPE;
  out['content-length'] = String(entry.body.length);
  headers = Object.freeze(out);
  entryHeaderCache.set(entry, headers);
  return headers;
}

/**
 * The per-request headers, in the order the fresh-hit path writes them (AGE_SLOT, X_CACHE_SLOT,
 * REQUEST_ID_SLOT count from the end of its header array).
 */
export const PER_REQUEST_HEADERS = ['age', 'x-cache', 'x-request-id'] as const;

/** A cached entry delivered: the status and headers it was stored with, per-request headers. */
export function deliverEntry(
  request: FastifyRequest,
  reply: FastifyReply,
  entry: CacheEntry,
  disposition: Disposition,
  identity: Identity,
  now: number,
): FastifyReply {
  reply.code(entry.status).headers(entryHeaders(entry));
  reply.header('age', String(ageSeconds(entry, now)));
  stamp(request, reply, disposition, identity);
  return reply.send(entry.body);
}

/** An answer fetched just now (stored or not). */
export function deliverAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
  disposition: Disposition,
  identity: Identity,
): FastifyReply {
  reply.code(answer.status).headers(answer.headers);
  if (answer.setCookies.length > 0) reply.header('set-cookie', answer.setCookies);
  stamp(request, reply, disposition, identity);
  return reply.send(answer.body);
}

function stamp(request: FastifyRequest, reply: FastifyReply, disposition: Disposition, identity: Identity): void {
  const cc = requesterCacheControl(identity, headerString(reply.getHeader('cache-control') as string | string[] | undefined));
  if (cc !== undefined) {
    reply.header('cache-control', cc);
    reply.removeHeader('expires');
  }
  reply.header('x-cache', disposition);
  reply.header('x-request-id', request.id);
}
