/**
 * What every worker's environment carries besides the primary's: the malloc setting the store's
 * slabs rely on, whoever started the primary, and the mark that makes a process one of our
 * workers (main.ts). The configuration itself does not travel in the environment: a worker asks
 * the primary for it over IPC (worker-config.ts).
 */

/**
 * Set by the primary on its workers, and on nothing else: a process forked by another cluster
 * manager (pm2's cluster mode forks with node:cluster too) stays a whole gateway of its own.
 */
export const CLUSTER_WORKER_MARK = 'WIKIEDGE_CLUSTER_WORKER';

/**
 * glibc raises its mmap threshold each time an mmapped block is freed, after which the store's
 * 128 KiB-1 MiB slabs come from the heap and a freed slab's memory is cut up by small
 * allocations instead of going back to the OS (a 100 MB store fed 400,000 1 KiB answers: RSS
 * 142 or 193 MB from run to run without, 127-128 MB every time with). A fixed threshold keeps
 * every slab a mapping of its own. Not lower: Node reads sockets into 64 KiB buffers, which
 * would then each be a mapping too.
 */
const SLAB_FRIENDLY_MMAP_THRESHOLD = '131072';

export function workerEnv(): Record<string, string> {
  return {
    MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? SLAB_FRIENDLY_MMAP_THRESHOLD,
    [CLUSTER_WORKER_MARK]: '1',
  };
}
