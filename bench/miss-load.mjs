// An undici-based load generator with wrk's shape (closed loop, N keep-alive connections, each
// sending its next request as soon as its answer has ended), every request a new URL: URL, then
// PREFIX, then a counter. bench/miss-throughput.mjs measures it beside wrk with bench/miss-urls.lua
// and takes the faster one. Prints one JSON line: requests, req/s, non-2xx answers, errors.
// COOKIE (may be empty) and ACCEPT_ENCODING are sent with every request when given.
//   node bench/miss-load.mjs URL CONNECTIONS SECONDS PREFIX [COOKIE [ACCEPT_ENCODING]]
import { Pool } from 'undici';

const [url, connections = '16', seconds = '8', prefix = String(Date.now()), cookie, acceptEncoding] = process.argv.slice(2);
const target = new URL(url);
const pool = new Pool(target.origin, { connections: Number(connections), pipelining: 1 });
const pathPrefix = `${target.pathname}${target.search}${prefix}-`;
const headers = { ...(cookie && { cookie }), ...(acceptEncoding && { 'accept-encoding': acceptEncoding }) };
let n = 0;
let done = 0;
let non2xx = 0;
let errors = 0;
const started = performance.now();
const until = started + Number(seconds) * 1000;

async function loop() {
  while (performance.now() < until) {
    try {
      const { statusCode, body } = await pool.request({ method: 'GET', path: `${pathPrefix}${++n}`, headers });
      await body.dump();
      if (statusCode < 200 || statusCode >= 400) non2xx++;
      done++;
    } catch {
      errors++;
    }
  }
}

await Promise.all(Array.from({ length: Number(connections) }, loop));
const elapsed = (performance.now() - started) / 1000;
await pool.close();
console.log(JSON.stringify({ requests: done, rps: done / elapsed, non2xx, errors }));
