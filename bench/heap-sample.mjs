// Preloaded into a gateway (`node --import bench/heap-sample.mjs dist/main.js`): V8's sampling
// heap profiler, objects that the young and the old generation's collections freed kept in the
// profile, so it counts what a request allocates, not only what survives it. The first SIGUSR2
// starts sampling, the next one stops it and writes the profile (.heapprofile JSON, what Chrome
// DevTools' Memory tab loads) to BENCH_HEAP_PROFILE. Used by bench/miss-throughput.mjs
// (BENCH_HEAP=1); bench/heapprofile.mjs summarises one.
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

const out = process.env.BENCH_HEAP_PROFILE;
if (!out) throw new Error('bench/heap-sample.mjs: set BENCH_HEAP_PROFILE to the file to write');
const session = new Session();
session.connect();
const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    // One sample per 4 KiB allocated on average (V8's default is 32 KiB): a miss allocates tens of KiB.
    void post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  sampling = false;
  void post('HeapProfiler.stopSampling').then(({ profile }) => writeFileSync(out, JSON.stringify(profile)));
});
await post('HeapProfiler.enable');
