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
import type { Coding } from './accept-encoding.js';

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
