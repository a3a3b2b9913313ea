/**
 * How answers are compressed: once per entry (gzip), when it is stored for a client that takes
 * it or at the first hit whose client does (compression/representations.ts gzipFirst), once per
 * answer that is not stored, once per hot entry in the background (br at its best quality). Levels and thresholds
 * were chosen by measuring node:zlib on 504 real api.php answers of the test wiki (siteinfo by
 * siprop in json, formatversion=2, xml, JSONP and jsonfm, paraminfo, help, parse and revisions
 * of 25 pages, allmessages; bench/compression.mjs, docs/BENCHMARKS.md "Compression"); the 403
 * of them from 1 KiB up, 8.4 KB on average:
 *
 *   gzip level 1 / 4 / 5 / 6 / 9   3.13 / 3.32 / 3.38 / 3.39 / 3.40× smaller, 13-15 µs per KB (9: 22)
 *   br quality 4 / 5 / 6           3.41 / 3.66 / 3.67×, 19-26 µs per KB
 *   br quality 10 / 11             4.07 / 4.19×, 420 / 1,080 µs per KB
 *   gunzip                         3 µs per KB of answer
 *
 * - Stored: gzip at level 6 (zlib's default, and MediaWiki's own OutputHandler's). Every client
 *   that compresses takes gzip; nothing cheaper is meaningfully larger and nothing dearer is
 *   meaningfully smaller.
 * - br at a quality cheap enough for the miss path (5) is only 7 % smaller than that gzip, and
 *   would add 90 % to what each entry holds; at quality 11 it is 19 % smaller but costs ~1 ms
 *   per KB. So br is made at quality 11 in the background, only for entries br clients keep
 *   asking for (representations.ts), where it pays.
 * - Not stored as such: identity. Clients without Accept-Encoding get the gzip decoded (3 µs per
 *   KB; hot ones are kept decoded, representations.ts): keeping the answer beside its gzip would
 *   hold more per entry than the answer alone did before.
 * - Under MIN_COMPRESS_BYTES, or when gzip saves less than a tenth, the answer stays as it is: a
 *   small answer gains less than an entry's own overhead (~1.1 KB with its key and headers).
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gunzip as gunzipCallback, gunzipSync, gzip, gzipSync, type BrotliOptions } from 'node:zlib';

/** Answers below this stay identity, stored and sent. */
export const MIN_COMPRESS_BYTES = 1024;
/** gzip must save at least this fraction, or the answer stays identity. */
const MIN_SAVING = 0.1;
export const GZIP_LEVEL = 6;
/** br for answers compressed once for one client (not stored). */
export const BR_ANSWER_QUALITY = 5;
/** br made in the background for hot entries. */
export const BR_UPGRADE_QUALITY = 11;
/** Above this, compression runs on libuv's thread pool: ~15 µs per KB would block the loop for ms. */
const SYNC_MAX_BYTES = 64 * 1024;

/** How an entry's body is stored: as it is, or gzip (with the answer's own length). */
export type StoredForm = { readonly coding: 'identity' } | { readonly coding: 'gzip'; readonly body: Buffer };

/** What a compression cost, for the metrics: the input, the output, the seconds it took. */
export interface CompressionCost {
  readonly coding: Exclude<Coding, 'identity'>;
  readonly inBytes: number;
  readonly outBytes: number;
  readonly seconds: number;
}

const gzipAsync = promisify(gzip);
/** A stored gzip body as the answer it holds, on libuv's thread pool (large ones). */
export const gunzipAsync: (body: Buffer) => Promise<Buffer> = promisify(gunzipCallback);
const brotliAsync = promisify(brotliCompress);

function brotliOptions(quality: number, size: number): BrotliOptions {
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: size,
    },
  };
}

/** Whether an answer of this many bytes is worth compressing at all. */
export function compressible(bytes: number): boolean {
  return bytes >= MIN_COMPRESS_BYTES;
}

/**
 * gzip's options for an answer of `bytes`: level 6, and a deflate state no larger than the answer
 * needs. zlib's defaults (windowBits 15, memLevel 8) allocate ~256 KB per stream (zlib.h
 * deflateInit2: "(1 << (windowBits+2)) + (1 << (memLevel+9))"), made and freed for every answer
 * stored; freed at the top of the heap, glibc gives it back to the kernel and the next miss
 * faults it in again (~5 minor page faults per miss at the gateway's MALLOC_MMAP_THRESHOLD_). A
 * window as large as the answer finds every match the full one would (no distance exceeds the
 * answer), and a literal buffer as large as it keeps it in one block: the same size of output
 * (the 36 answers of test/fixtures, and a 2 KB siteinfo answer: byte-for-byte the same length),
 * from ~48 KB of state for a 2 KB answer.
 */
export function gzipOptions(bytes: number): { level: number; windowBits: number; memLevel: number } {
  const bits = Math.ceil(Math.log2(Math.max(bytes, 1)));
  return { level: GZIP_LEVEL, windowBits: Math.min(15, Math.max(9, bits)), memLevel: Math.min(8, Math.max(1, bits - 6)) };
}

/** `coding` of `identity`, sync for small answers, on the thread pool for large ones. */
export async function encode(identity: Buffer, coding: Exclude<Coding, 'identity'>, brQuality = BR_ANSWER_QUALITY): Promise<Buffer> {
  if (coding === 'gzip')
    return identity.length <= SYNC_MAX_BYTES ? gzipSync(identity, gzipOptions(identity.length)) : gzipAsync(identity, gzipOptions(identity.length));
  const opts = brotliOptions(brQuality, identity.length);
  return identity.length <= SYNC_MAX_BYTES && brQuality <= BR_ANSWER_QUALITY ? brotliCompressSync(identity, opts) : brotliAsync(identity, opts);
}

/** `encode`, timed: the bytes and what they cost. */
export async function encodeMeasured(
  identity: Buffer,
  coding: Exclude<Coding, 'identity'>,
  brQuality = BR_ANSWER_QUALITY,
): Promise<{ body: Buffer; cost: CompressionCost }> {
  const started = performance.now();
  const body = await encode(identity, coding, brQuality);
  return { body, cost: { coding, inBytes: identity.length, outBytes: body.length, seconds: (performance.now() - started) / 1000 } };
}

/** The form an answer is stored in (gzip when it pays, see the module comment), and its cost. */
export async function storedForm(identity: Buffer): Promise<{ form: StoredForm; cost: CompressionCost | undefined }> {
  if (!compressible(identity.length)) return { form: { coding: 'identity' }, cost: undefined };
  const { body, cost } = await encodeMeasured(identity, 'gzip');
  return { form: worthIt(identity, body), cost };
}

/**
 * storedForm on the caller's thread, for an answer small enough to compress there (up to
 * SYNC_MAX_BYTES); undefined for a larger one, which storedForm compresses on the thread pool.
 */
export function storedFormSync(identity: Buffer): { form: StoredForm; cost: CompressionCost | undefined } | undefined {
  if (!compressible(identity.length)) return { form: { coding: 'identity' }, cost: undefined };
  if (identity.length > SYNC_MAX_BYTES) return undefined;
  const started = performance.now();
  const body = gzipSync(identity, gzipOptions(identity.length));
  const cost: CompressionCost = { coding: 'gzip', inBytes: identity.length, outBytes: body.length, seconds: (performance.now() - started) / 1000 };
  return { form: worthIt(identity, body), cost };
}

/** The gzip as the stored form when it saves at least MIN_SAVING, else the answer as it is. */
function worthIt(identity: Buffer, gzip: Buffer): StoredForm {
  return gzip.length > identity.length * (1 - MIN_SAVING) ? { coding: 'identity' } : { coding: 'gzip', body: gzip };
}

/** A stored gzip body as the answer it holds (small ones: a few µs per KB). */
export function gunzip(body: Buffer): Buffer {
  return gunzipSync(body);
}

// --- Which coding a request accepts ---

/**
 * Proactive negotiation of the content coding (RFC 9110 §12.5.3, Accept-Encoding): which of the
 * codings the gateway can send (`br`, `gzip`, none) a request accepts, best first. Pure, but for
 * a bounded memo: clients send a handful of distinct field values (`gzip, deflate, br, zstd`,
 * `gzip, deflate`, …), so the fresh-hit path reads the answer from a Map instead of parsing.
 *
 * The rules, as RFC 9110 §12.5.3 states them:
 * 1. "If no Accept-Encoding header field is in the request, any content coding is considered
 *    acceptable by the user agent." The same section warns that it "does not imply that the user
 *    agent will be able to correctly process all encodings": curl without `--compressed`, PHP's
 *    file_get_contents, Python's urllib and Java's HttpURLConnection send none and print or parse
 *    what they get as it is. So a request without the field gets identity, as nginx and
 *    Varnish give it.
 * 2. "If the representation has no content coding, then it is acceptable by default unless
 *    specifically excluded by the Accept-Encoding header field stating either "identity;q=0" or
 *    "*;q=0" without a more specific entry for "identity"."
 * 3. "If the representation's content coding is one of the content codings listed in the
 *    Accept-Encoding field value, then it is acceptable unless it is accompanied by a qvalue of
 *    0." `*` "matches any available content coding not explicitly listed in the field"; a coding
 *    neither listed nor matched by `*` is not acceptable.
 * - "When selecting between multiple content codings that have the same purpose, the acceptable
 *   content coding with the highest non-zero qvalue is preferred." Equal weights go to the
 *   smaller answer: br, then gzip, then identity. Identity without an entry of its own (or `*`)
 *   is acceptable but comes after every coding the client weighted (`gzip;q=0.1` gets gzip).
 * - "An Accept-Encoding header field with a field value that is empty implies that the user agent
 *   does not want any content coding in response": identity.
 * - "If a non-empty Accept-Encoding header field is present in a request and none of the
 *   available representations for the response have a content coding that is listed as
 *   acceptable, the origin server SHOULD send a response without any content coding unless the
 *   identity coding is indicated as unacceptable." When identity is refused too (`identity;q=0`
 *   alone, `*;q=0`, `deflate, identity;q=0`) nothing the gateway can send is acceptable: the
 *   answer is 406 Not Acceptable (§15.5.7: "the target resource does not have a current
 *   representation that would be acceptable to the user agent, according to the proactive
 *   negotiation header fields received in the request, and the server is unwilling to supply a
 *   default representation"). Sending identity anyway would also be allowed (§12.1 lets a server
 *   disregard the field); the client said plainly it cannot use it.
 * - `x-gzip` is gzip (§8.4.1.3: "A recipient SHOULD consider "x-gzip" to be equivalent to
 *   "gzip""); codings the gateway does not produce (deflate, zstd, compress) are ignored.
 * - A weight that is not a qvalue (§12.4.2: 0 to 1, at most three decimals) makes its element
 *   ignored, as if absent; a coding listed twice keeps its lowest weight (a refusal stands).
 */

/** The content codings the gateway sends; `identity` is none. */
export type Coding = 'br' | 'gzip' | 'identity';

/** The acceptable codings, best first (never empty), or `not-acceptable` (406). */
export type Preference = readonly Coding[] | 'not-acceptable';

/** Tie-break order: the smaller answer first. */
const CODINGS: readonly Coding[] = ['br', 'gzip', 'identity'];

const IDENTITY_ONLY: Preference = Object.freeze(['identity'] as Coding[]);

/** §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ). */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The weight of an element's parameters: the q parameter's, 1 without one, NaN if malformed. */
function weightOf(params: readonly string[]): number {
  for (const param of params) {
    const eq = param.indexOf('=');
    const name = (eq === -1 ? param : param.slice(0, eq)).trim().toLowerCase();
    if (name !== 'q') continue;
    const value = eq === -1 ? '' : param.slice(eq + 1).trim();
    return QVALUE.test(value) ? Number(value) : NaN;
  }
  return 1;
}

/** The preference a field value states (undefined: the field is absent). Not memoised. */
export function parseAcceptEncoding(field: string | undefined): Preference {
  if (field === undefined) return IDENTITY_ONLY;
  const weights = new Map<string, number>();
  for (const element of field.split(',')) {
    const [rawName = '', ...params] = element.split(';');
    let name = rawName.trim().toLowerCase();
    if (name === '') continue; // §5.6.1.2: empty list elements do not count
    if (name === 'x-gzip') name = 'gzip';
    const q = weightOf(params);
    if (Number.isNaN(q)) continue;
    const seen = weights.get(name);
    weights.set(name, seen === undefined ? q : Math.min(seen, q));
  }
  // Empty (or only empty elements): "does not want any content coding".
  if (weights.size === 0) return IDENTITY_ONLY;
  const star = weights.get('*');
  const weight = (coding: Coding): number => {
    const own = weights.get(coding);
    if (own !== undefined) return own;
    if (star !== undefined) return star;
    // Unlisted identity is acceptable, after anything weighted; an unlisted coding is not.
    return coding === 'identity' ? Number.MIN_VALUE : 0;
  };
  const order = CODINGS.map((coding, rank) => ({ coding, q: weight(coding), rank }))
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || a.rank - b.rank)
    .map((c) => c.coding);
  return order.length === 0 ? 'not-acceptable' : Object.freeze(order);
}

/**
 * Distinct field values remembered: real clients send a few dozen; a client sending a new value
 * every time only costs its own parse once the memo is full (values past the bound are parsed,
 * not remembered).
 */
const MEMO_MAX = 256;
/** Longer values are parsed each time, not remembered (nothing real is that long). */
const MEMO_MAX_LENGTH = 256;
const memo = new Map<string, Preference>();

/** parseAcceptEncoding, remembered per field value. `field`: the request's header as Node gives it. */
export function preferenceOf(field: string | undefined): Preference {
  if (field === undefined) return IDENTITY_ONLY;
  const known = memo.get(field);
  if (known !== undefined) return known;
  const preference = parseAcceptEncoding(field);
  if (memo.size < MEMO_MAX && field.length <= MEMO_MAX_LENGTH) memo.set(field, preference);
  return preference;
}

/**
 * The coding to send: the client's best that `has` says is ready (stored, or identity, which
 * can always be had), else its first choice (to be made on the fly).
 */
export function chooseCoding(preference: readonly Coding[], has: (coding: Coding) => boolean): Coding {
  for (const coding of preference) if (has(coding)) return coding;
  return preference[0]!;
}

/** Whether a client takes gzip over the answer as it is: gzip comes before identity in its preference (br aside). */
export function prefersGzipToIdentity(preference: readonly Coding[]): boolean {
  for (const coding of preference) {
    if (coding === 'gzip') return true;
    if (coding === 'identity') return false;
  }
  return false;
}
