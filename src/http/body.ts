/**
 * Reading an upstream body into memory, bounded, into one buffer.
 *
 * A small body made by Buffer.concat() is a slice of Node's shared 8 KiB pool and
 * would keep ~9x its size alive if it were cached as it is. It is not: the store copies every
 * body it keeps into its slabs (cache/slab-arena.ts), so the buffer read here only lives as long as
 * the answer being sent, and Buffer.concat's pooled allocation is the cheap one.
 */
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { GatewayError } from '../words/errors.js';

export type ReadBodyResult =
  | { readonly complete: true; readonly body: Buffer }
  /** Larger than the limit: what was read, and a stream that replays it followed by the rest. */
  | { readonly complete: false; readonly stream: Readable };

export async function readBounded(
  source: Readable,
  limit: number,
  /** `end`: the rest's reader leaving ends the source (a wiki's answer); `keep`: a client's request, whose socket still carries our answer. */
  sourceWhenLeft: 'end' | 'keep' = 'end',
): Promise<ReadBodyResult> {
  const chunks: Buffer[] = [];
  let length = 0;
  const iterator = source[Symbol.asyncIterator]();
  while (true) {
    const { value, done } = await iterator.next();
    if (done) break;
    const chunk = value as Buffer;
    chunks.push(chunk);
    length += chunk.length;
    if (length > limit) return { complete: false, stream: replayThenRest(source, iterator, chunks, sourceWhenLeft) };
  }
  return { complete: true, body: Buffer.concat(chunks, length) };
}

/**
 * A stream of `read` followed by the rest of `iterator` over `source`. Whoever reads it may leave
 * before its end (Fastify destroys a reply's stream when its client goes): destroying it ends
 * `source` at once (`end`), or the wiki's connection would stay open until the wiki finished or its body
 * timed out. (An async generator over the iterator, as before, could not: destroying a
 * Readable.from() waits for the generator's return(), which waits for the `iterator.next()` it
 * sits in while the source is quiet.)
 */
function replayThenRest(source: Readable, iterator: AsyncIterator<unknown>, read: Buffer[], sourceWhenLeft: 'end' | 'keep'): Readable {
  let replayed = false;
  return new Readable({
    read() {
      if (!replayed) {
        replayed = true;
        for (const chunk of read) this.push(chunk);
        return;
      }
      iterator.next().then(
        (next) => this.push(next.done ? null : (next.value as Buffer)),
        (err: unknown) => this.destroy(err as Error),
      );
    },
    destroy(err, callback) {
      if (sourceWhenLeft === 'end' && !source.readableEnded) source.destroy();
      callback(err);
    },
  });
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const brotliAsync = promisify(brotliDecompress);

/**
 * Undo a Content-Encoding so the body can be inspected (debuginfo hides in compressed answers
 * too). The gateway asks the wiki for identity encoding; this handles a wiki that compresses anyway.
 */
export async function decodeContent(body: Buffer, encoding: string | undefined, limit: number): Promise<Buffer> {
  const coding = encoding?.trim().toLowerCase();
  if (!coding || coding === 'identity') return body;
  const opts = { maxOutputLength: limit };
  let out: Buffer;
  try {
    if (coding === 'gzip' || coding === 'x-gzip') out = await gunzipAsync(body, opts);
    else if (coding === 'deflate') out = await inflateAsync(body, opts);
    else if (coding === 'br') out = await brotliAsync(body, opts);
    else throw new Error(`unsupported content-encoding ${coding}`);
  } catch (cause) {
    throw new GatewayError('wikiedge-upstream-bad-response', { cause });
  }
  return out;
}
