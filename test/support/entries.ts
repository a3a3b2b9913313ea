// What a stored entry holds, as the answer it is: entries are stored compressed
// (src/http/codings.ts storedForm), so a test that looks inside the cache for something
// that must not be there (a credential, debuginfo) reads the answer, not its gzip.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { CacheEntry } from '../../src/cache/entry.js';

/** The entry's answer: its body decoded when it is stored compressed. */
export function answerOf(entry: CacheEntry): Buffer {
  return entry.coding === 'gzip' ? gunzipSync(entry.body) : entry.body;
}

/** Every form the entry holds, decoded: the answer, and its br form when it has one. */
export function storedAnswers(entry: CacheEntry): Buffer[] {
  return [answerOf(entry), ...(entry.br ? [brotliDecompressSync(entry.br)] : [])];
}
