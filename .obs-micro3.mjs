import { createLogger, batchedDestination } from './dist/logging.js';
import { AccessLog } from './dist/access-log.js';
import { parseTarget } from './dist/target.js';
import { Registry } from 'prom-client';
import { RequestTally } from './dist/request-metrics.js';
const mode = process.argv[2];
const log = createLogger('info', { destination: batchedDestination('/dev/null') });
const al = AccessLog.of(log);
const t = new RequestTally(new Registry());
const cell = t.cell('hit', 'query+filearchive', 'GET', 200);
const target = parseTarget('/w/api.php?action=query&list=filearchive&format=json&formatversion=2');
const PER_TICK = 20, TICKS = 50_000;
let i = 0;
const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
await new Promise((resolve) => {
  const tick = () => {
    for (let k = 0; k < PER_TICK; k++, i++) {
      if (mode === 'none') continue;
      al.hit(target, cell, 'abcdef123456-' + i.toString(36), 200, 0.0000123, '127.0.0.1', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36', 98, 412);
    }
    if (i >= PER_TICK * TICKS) return resolve();
    setImmediate(tick);
  };
  tick();
});
const c = process.cpuUsage(c0); const el = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(mode, 'cpu µs/line', ((c.user + c.system) / (PER_TICK * TICKS)).toFixed(3), 'wall ms', el.toFixed(0));
