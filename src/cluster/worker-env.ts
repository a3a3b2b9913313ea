/**
 * What every worker's environment carries besides the primary's: settings that must be the same
 * in every worker, or that the workers need whoever started the primary. Read once, when the
 * primary starts; a worker forked later (a restart) gets the same.
 */
import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '../config.js';

/**
 * glibc raises its mmap threshold each time an mmapped block is freed, after which the store's
 * 128 KiB-1 MiB slabs come from the heap and a freed slab's memory is cut up by small
 * allocations instead of going back to the OS (a 100 MB store fed 400,000 1 KiB answers: RSS
 * 142 or 193 MB from run to run without, 127-128 MB every time with). A fixed threshold keeps
 * every slab a mapping of its own. Not lower: Node reads sockets into 64 KiB buffers, which
 * would then each be a mapping too.
 */
const SLAB_FRIENDLY_MMAP_THRESHOLD = '131072';

export function workerEnv(config: Config): Record<string, string> {
  // Workers hold the caches: give them the malloc setting the store's slabs rely on
  // (cache/arena.ts), whoever started the primary.
  return { MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? SLAB_FRIENDLY_MMAP_THRESHOLD, ...workerSecret(config) };
}

/**
 * Workers must share the key of the session slots' HMAC (a session's entries, in Redis and in
 * purge messages, are keyed by it). Without a configured WIKIEDGE_IDENTITY_SECRET each process
 * would draw its own at start, so the primary draws one and hands it to every worker. (A
 * configured secret loads the same twice; a drawn one never does.)
 */
function workerSecret(config: Config): Record<string, string> {
  if (loadConfig().identitySecret.equals(config.identitySecret)) return {};
  return { WIKIEDGE_IDENTITY_SECRET: randomBytes(32).toString('base64url') };
}
