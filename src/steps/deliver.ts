/**
 * vcl_deliver: the one place that says what an api.php answer goes out with, for the full path
 * (Fastify) and the fresh-hit path (fresh-hit.ts) alike.
 *
 * - The representation: the coding the client takes best among those at hand (compression/
 *   http/codings.ts chooseCoding): a stored entry's gzip or br, or the answer itself (decoded
 *   when it is stored compressed); made for this one answer only when the client takes none of
 *   those (compression/representations.ts). An answer not stored is compressed once for its
 *   client when it is large enough (http/codings.ts compressible).
 * - A stored entry goes out with entryHeaders(entry, coding): its stored headers, the
 *   Content-Type Fastify gives a Buffer when none is set, the representation's
 *   Content-Encoding and Content-Length. Computed once per entry and coding (entries are
 *   replaced, not edited). HEAD gets the same headers without the body (RFC 9110 §9.3.2).
 * - Every answer then gets the per-request headers: Age (cached answers), X-Cache (the
 *   disposition), X-Request-Id.
 * - A requester that carries credentials is never told an answer is public
 *   (policy.ts requesterCacheControl).
 * - An answer fetched just now goes out with the client's headers (policy.ts responseHeaders)
 *   and the Set-Cookie lines the client may see.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ageSeconds } from '../policy/freshness.js';
import type { CacheEntry } from '../cache/entry.js';
import { chooseCoding, type Coding, compressible, type StoredForm } from '../http/codings.js';
import type { Representations } from '../compression/representations.js';
import { headerString } from '../http/forwarding.js';
import type { Identity } from '../mediawiki/identity.js';
import type { Disposition } from '../words/outcomes.js';
import { representationHeaders, requesterCacheControl, varyOnAcceptEncoding } from '../policy/policy.js';

/** What the wiki answered, ready to deliver: headers already rewritten for the client. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly setCookies: readonly string[];
  /** The answer as it is (identity), whole, or what was read followed by the rest. */
  readonly body: Buffer | NodeJS.ReadableStream;
  /**
   * Its stored form, when it was made before the answer went out (flow.ts fetchAndStore: for a
   * client that takes the gzip): its hits get that form, and so does this answer. An answer
   * stored as it is (its client does not take gzip) has none here, and says so with
   * storedLater.
   */
  readonly stored?: StoredForm;
  /** Stored as it is once it went out, its gzip made by the first hit that takes it: the client gets what its hits will (identity when it takes it). */
  readonly storedLater?: true;
}

/** The Content-Type Fastify sends for a Buffer body without one (fastify/lib/reply.js). */
const BUFFER_CONTENT_TYPE = 'application/octet-stream';

type Headers = Readonly<Record<string, string | string[]>>;
const entryHeaderCache = new WeakMap<CacheEntry, Partial<Record<Coding, Headers>>>();

/** The stored forms of an entry a client can be sent without making anything. */
export function stored(entry: CacheEntry, coding: Coding): boolean {
  return coding === 'identity' || (coding === 'gzip' ? entry.coding === 'gzip' : entry.br !== undefined);
}

/**
 * The coding an entry goes out in for a client with this preference: its best that the entry
 * holds (identity always: decoded if need be), else its first choice, to be made for it
 * (http/codings.ts chooseCoding, without a closure per hit).
 */
export function codingFor(entry: CacheEntry, preference: readonly Coding[]): Coding {
  for (const coding of preference) if (stored(entry, coding)) return coding;
  return preference[0]!;
}

/**
 * Above this answer size, a coding an entry is not stored in is not made for a hit: the client
 * gets 406 (RFC 9110 §15.5.7: no representation it accepts is at hand). Only a client that
 * refuses identity and the stored coding gets there (`br, identity;q=0` on an entry without br);
 * hits are never limited, and made per hit a 1 MB answer's br took ~22 ms of CPU, 35 times a
 * gzip hit (test/in-process/attack-compression-on-every-hit.test.ts: kept made forms were evicted again by a client
 * cycling through 40 such entries). Below it, a made form costs about what a hit does, and is
 * kept (compression/representations.ts).
 */
export const MADE_FOR_A_HIT_MAX_BYTES = 16 * 1024;

/** Whether delivering `entry` to a client with this preference would make a large representation (406 instead). */
export function tooCostlyForAHit(entry: CacheEntry, preference: readonly Coding[]): boolean {
  const coding = codingFor(entry, preference);
  return !stored(entry, coding) && (entry.coding ? (entry.identityBytes ?? 0) : entry.body.length) > MADE_FOR_A_HIT_MAX_BYTES;
}

/** The length of a stored form (identity: the answer's own, without decoding it). */
function storedLength(entry: CacheEntry, coding: Coding): number {
  if (coding === 'br') return entry.br!.length;
  if (coding === 'gzip' || !entry.coding) return entry.body.length;
  return entry.identityBytes!;
}

/**
 * The headers an entry goes out with in a stored form (`coding`, see `stored`) besides the
 * per-request ones (see the module comment).
 */
export function entryHeaders(entry: CacheEntry, coding: Coding = 'identity'): Headers {
  let byCoding = entryHeaderCache.get(entry);
  const known = byCoding?.[coding];
  if (known) return known;
  const headers = Object.freeze(headersFor(entry, coding, storedLength(entry, coding)));
  if (!byCoding) entryHeaderCache.set(entry, (byCoding = {}));
  byCoding[coding] = headers;
  return headers;
}

/** An entry's headers in `coding` with a body of `length` bytes. */
function headersFor(entry: CacheEntry, coding: Coding, length: number): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in entry.headers) {
    // The body's own length is sent below.
    if (name !== 'content-length') Object.defineProperty(out, name, { value: entry.headers[name]!, enumerable: true, writable: true, configurable: true });
  }
  if (out['content-type'] === undefined) out['content-type'] = BUFFER_CONTENT_TYPE;
  const representation = representationHeaders(out, coding);
  representation['content-length'] = String(length);
  return representation;
}

/**
 * The per-request headers, in the order the fresh-hit path writes them (AGE_SLOT, X_CACHE_SLOT,
 * REQUEST_ID_SLOT count from the end of its header array).
 */
export const PER_REQUEST_HEADERS = ['age', 'x-cache', 'x-request-id'] as const;
/**
 * The same as a set: a wiki behind another cache sends its own (`Age`, `X-Cache`), which the
 * answer and its entry keep (policy.ts responseHeaders), and which ours replace, never join.
 */
export const PER_REQUEST: ReadonlySet<string> = new Set(PER_REQUEST_HEADERS);

/** A cached entry delivered: the status and headers it was stored with, per-request headers. */
export async function deliverEntry(
  compression: Representations,
  request: FastifyRequest,
  reply: FastifyReply,
  entry: CacheEntry,
  delivered: { readonly disposition: Disposition; readonly identity: Identity; readonly preference: readonly Coding[]; readonly now: number },
): Promise<FastifyReply> {
  const coding = codingFor(entry, delivered.preference);
  const head = request.method === 'HEAD';
  let body: Buffer;
  let headers: Headers;
  if (stored(entry, coding)) {
    // HEAD needs the lengths only: an identity HEAD of a gzip entry is not decoded.
    body = head ? EMPTY : await compression.bytesOf(entry, coding);
    headers = entryHeaders(entry, coding);
  } else {
    // A coding the entry is not stored in, that the client insists on (identity refused).
    body = await compression.bytesOf(entry, coding);
    headers = headersFor(entry, coding, body.length);
  }
  compression.metrics.served(coding, head ? 0 : body.length);
  const age = String(ageSeconds(entry, delivered.now));
  if (writeWhole(request, reply, entry.status, headers, NO_COOKIES, delivered, age, body)) return reply;
  reply.code(entry.status).headers(headers);
  reply.header('age', age);
  stamp(request, reply, delivered.disposition, delivered.identity);
  return reply.send(body);
}

const NO_COOKIES: readonly string[] = [];

const EMPTY = Buffer.alloc(0);

/** An answer fetched just now (stored or not). */
export function deliverAnswer(
  compression: Representations,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
  delivered: { readonly disposition: Disposition; readonly identity: Identity; readonly preference: readonly Coding[] },
): FastifyReply | Promise<FastifyReply> {
  const representation = representationOf(compression, answer, delivered.preference);
  // Most answers go as they are: no promise then (docs/BENCHMARKS.md run X).
  return representation instanceof Promise
    ? representation.then((r) => sendAnswer(compression, request, reply, answer, delivered, r))
    : sendAnswer(compression, request, reply, answer, delivered, representation);
}

interface Representation {
  readonly headers: Headers;
  readonly body: Buffer | NodeJS.ReadableStream;
  readonly coding: Coding;
}

function sendAnswer(
  compression: Representations,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
  delivered: { readonly disposition: Disposition; readonly identity: Identity },
  { headers, body, coding }: Representation,
): FastifyReply {
  if (Buffer.isBuffer(body)) {
    compression.metrics.served(coding, request.method === 'HEAD' ? 0 : body.length);
    if (writeWhole(request, reply, answer.status, headers, answer.setCookies, delivered, undefined, body)) return reply;
  }
  reply.code(answer.status).headers(headers);
  if (answer.setCookies.length > 0) reply.header('set-cookie', answer.setCookies);
  stamp(request, reply, delivered.disposition, delivered.identity);
  return reply.send(body);
}

/**
 * A whole answer written to node:http as the fresh-hit path writes it, not through Fastify's
 * reply.send, none of whose work applies to a Buffer we send (a parse of the Content-Type for a
 * serializer we do not use, onSend hooks we have none of, the headers copied into its own
 * object, then written from it): docs/BENCHMARKS.md run AK. Its rules for a Buffer are kept
 * (fastify/lib/reply.js onSendEnd): Content-Type application/octet-stream when there is none,
 * Content-Length the body's unless a HEAD says its own. The response's finish still runs the
 * onResponse hook, and its close the record's listener (request-record.ts).
 * False, with nothing written: a status without a body (1xx, 204, 304: Fastify drops the
 * headers that describe one) or a header Node refuses, for Fastify's way, which reports it.
 */
function writeWhole(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  headers: Headers,
  setCookies: readonly string[],
  delivered: { readonly disposition: Disposition; readonly identity: Identity },
  age: string | undefined,
  body: Buffer,
): boolean {
  // A header set on the response before (Fastify's `Connection: close` for a request routed
  // while it closes, fastify/lib/route.js) makes writeHead set the array's pairs one by one, the
  // last of a name winning: two Set-Cookie lines would go out as one. Fastify's way then. (The
  // gateway's own close ends each connection after its answer first, apps/app.ts
  // answerWithConnectionClose, so no test reaches this today: it guards what Fastify may add.)
  if (status < 200 || status > 599 || status === 204 || status === 304 || reply.raw.getHeaderNames().length > 0) return false;
  const cacheControl = requesterCacheControl(delivered.identity, headerString(headers['cache-control']));
  const head: string[] = [];
  for (const name in headers) {
    // A credentialed requester's Cache-Control replaces the answer's, and Expires goes (stamp).
    if (cacheControl !== undefined && (name === 'cache-control' || name === 'expires')) continue;
    if (name === 'content-length') continue;
    // Ours replace the wiki's (a fresh answer keeps the Age of a cache behind us).
    if (name === 'age' ? age !== undefined : PER_REQUEST.has(name)) continue;
    const value = headers[name]!;
    if (typeof value === 'string') head.push(name, value);
    else for (const v of value) head.push(name, v);
  }
  if (headers['content-type'] === undefined) head.push('content-type', BUFFER_CONTENT_TYPE);
  const length = headerString(headers['content-length']);
  head.push('content-length', length === undefined || (request.method !== 'HEAD' && Number(length) !== body.length) ? String(body.length) : length);
  if (cacheControl !== undefined) head.push('cache-control', cacheControl);
  for (const line of setCookies) head.push('set-cookie', line);
  if (age !== undefined) head.push('age', age);
  head.push('x-cache', delivered.disposition, 'x-request-id', request.id);
  try {
    reply.raw.writeHead(status, head);
  } catch {
    return false;
  }
  reply.hijack();
  reply.raw.end(body);
  return true;
}

/**
 * The representation of an answer fetched just now. Stored: what its hits will get (its stored
 * form, identity, or a coding made for this client when it takes neither). Not stored: the
 * client's first choice, compressed once when it is large enough (an answer under
 * MIN_COMPRESS_BYTES stays identity unless the client refuses identity). Streams, empty bodies
 * (a HEAD passed on), answers the wiki encoded itself and partial content go as they are. A
 * promise only when something has to be compressed.
 */
function representationOf(compression: Representations, answer: Answer, preference: readonly Coding[]): Representation | Promise<Representation> {
  const body = answer.body;
  if (!Buffer.isBuffer(body) || body.length === 0 || answer.headers['content-encoding'] !== undefined || answer.headers['content-range'] !== undefined)
    return { headers: answer.headers, body, coding: 'identity' };
  const form = answer.stored;
  // An answer stored later goes as identity to a client that takes it (br, say, would be made
  // for every miss where its hits get identity); one that refuses identity gets its first choice.
  const coding = form
    ? chooseCoding(preference, (c) => c === 'identity' || (c === 'gzip' && form.coding === 'gzip'))
    : compressible(body.length) && !answer.storedLater
      ? preference[0]!
      : chooseCoding(preference, (c) => c === 'identity');
  // The same Vary as the stored entry's (flow.ts), or as it would have had.
  const headers = (form ? form.coding === 'gzip' : compressible(body.length)) ? varyOnAcceptEncoding(answer.headers) : answer.headers;
  if (coding === 'identity') return { headers, body, coding };
  if (coding === 'gzip' && form?.coding === 'gzip') return { headers: representationHeaders(headers, coding), body: form.body, coding };
  return compression.answerBytes(body, coding).then((encoded) => ({ headers: representationHeaders(headers, coding), body: encoded, coding }));
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
