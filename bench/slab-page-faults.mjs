// What copying a stored answer into fresh slab memory costs (src/cache/slab-arena.ts: slabs are
// allocated whole, never reused, each its own mapping under MALLOC_MMAP_THRESHOLD_=131072, so
// every byte a miss stores lands on pages the kernel has not given the process yet), against the
// same copies into memory malloc hands back after a free (no fixed threshold: glibc reuses the
// freed slab). Run it both ways; the first round of each is the cold start:
//   MALLOC_MMAP_THRESHOLD_=131072 node bench/slab-page-faults.mjs
//   node bench/slab-page-faults.mjs
const COPIES = Number(process.env.BENCH_COPIES ?? 20_000);
const ANSWER_BYTES = Number(process.env.BENCH_ANSWER_BYTES ?? 3_000);
const SLAB_BYTES = 1024 * 1024;
const answer = Buffer.alloc(ANSWER_BYTES, 7);

/** µs per copy of the answer into the newest slab, a new slab (Buffer.allocUnsafeSlow, as the arena) when it is full. */
function copies() {
  let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  let at = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < COPIES; i++) {
    if (at + ANSWER_BYTES > SLAB_BYTES) {
      slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      at = 0;
    }
    answer.copy(slab, at);
    at += ANSWER_BYTES;
  }
  return Number(process.hrtime.bigint() - t0) / COPIES / 1000;
}

const faultsBefore = process.resourceUsage().minorPageFault;
const rounds = [0, 1, 2, 3].map(() => copies());
const faults = process.resourceUsage().minorPageFault - faultsBefore;
console.log(
  `MALLOC_MMAP_THRESHOLD_=${process.env.MALLOC_MMAP_THRESHOLD_ ?? '(glibc default)'}: ${ANSWER_BYTES}-byte copies into 1 MiB slabs, µs per copy by round: ${rounds.map((r) => r.toFixed(2)).join(' · ')}; minor page faults per copy ${(faults / (4 * COPIES)).toFixed(2)}`,
);
