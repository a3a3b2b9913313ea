/**
 * A reload's hand-over of the local tier (cluster/reload.ts): a replaced worker's shared entries
 * travel to the worker that takes its place, in chunks over the IPC channel, so that a reload
 * without Redis does not start every worker empty (what Varnish loses on a restart, and keeps on
 * a VCL reload). The framing is here, pure; the store decides what it adopts (store.ts adopt).
 *
 *   a chunk: records, each  u32 key length · key (UTF-8) · u32 entry length · entry (entry-codec.ts)
 *
 * Entries go oldest first (least recently used first), so that the new tier's LRU order is the
 * old one's and, should it be smaller (a reload that lowered the budget), the least recently used
 * are the ones that do not fit. Per-session entries stay behind: they live minutes, and the
 * knowledge of whose session each is (session-users.ts) would have to travel with them.
 */
import type { Tier } from '../words/outcomes.js';
import { decodeEntry, encodeEntry } from './entry-codec.js';
import type { CacheEntry } from './entry.js';

/** A chunk's size: large enough to move 100 MB in a few dozen messages, small enough not to stall either event loop. */
export const HAND_OVER_CHUNK_BYTES = 4 * 1024 * 1024;

export class HandOverChunks {
  private readonly entries: Iterator<[string, CacheEntry]>;

  constructor(
    entries: Iterable<[string, CacheEntry]>,
    private readonly tier: Tier = 'shared',
  ) {
    this.entries = entries[Symbol.iterator]();
  }

  /** The next chunk of at least one record and about `maxBytes`, or undefined once every entry went. */
  next(maxBytes = HAND_OVER_CHUNK_BYTES): Buffer | undefined {
    const parts: Buffer[] = [];
    let bytes = 0;
    while (bytes < maxBytes) {
      const step = this.entries.next();
      if (step.done) break;
      const [key, entry] = step.value;
      let encoded: Buffer;
      try {
        encoded = encodeEntry(this.tier, entry);
      } catch {
        continue; // an entry the codec cannot carry stays behind
      }
      const keyBytes = Buffer.from(key, 'utf8');
      const head = Buffer.allocUnsafe(4);
      head.writeUInt32BE(keyBytes.length);
      const length = Buffer.allocUnsafe(4);
      length.writeUInt32BE(encoded.length);
      parts.push(head, keyBytes, length, encoded);
      bytes += 8 + keyBytes.length + encoded.length;
    }
    return parts.length === 0 ? undefined : Buffer.concat(parts, bytes);
  }
}

/** The records of a chunk; a record cut short or not an entry ends the reading (what came before is kept). */
export function handedOverEntries(chunk: Uint8Array): { key: string; tier: Tier; entry: CacheEntry }[] {
  const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const out: { key: string; tier: Tier; entry: CacheEntry }[] = [];
  let at = 0;
  while (at + 4 <= buf.length) {
    const keyLength = buf.readUInt32BE(at);
    const entryAt = at + 4 + keyLength + 4;
    if (entryAt > buf.length) break;
    const entryLength = buf.readUInt32BE(entryAt - 4);
    if (entryAt + entryLength > buf.length) break;
    const key = buf.toString('utf8', at + 4, at + 4 + keyLength);
    try {
      // A copy: the entry's body must not keep the whole chunk alive (the store copies it into its slab anyway).
      out.push({ key, ...decodeEntry(Buffer.from(buf.subarray(entryAt, entryAt + entryLength))) });
    } catch {
      break;
    }
    at = entryAt + entryLength;
  }
  return out;
}
