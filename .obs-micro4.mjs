import pino from 'pino';
import { LineBatches } from './dist/logging.js';
import { AccessLog } from './dist/access-log.js';
import { parseTarget } from './dist/target.js';
import { Registry } from 'prom-client';
import { RequestTally } from './dist/request-metrics.js';
const [sync, kib] = [process.argv[2] === 'sync', Number(process.argv[3])];
const B = kib * 1024;
const dest = new LineBatches(pino.destination({ dest: '/dev/null', sync, minLength: sync ? 0 : B - 1, maxWrite: Math.max(16384, 2 * B) }), B, 250);
const log = pino({ level: 'info', base: { service: 'wikiedge' } }, dest);
const al = AccessLog.of(log);
const t = new RequestTally(new Registry());
const cell = t.cell('hit', 'query+filearchive', 'GET', 200);
const target = parseTarget('/w/api.php?action=query&list=filearchive&format=json&formatversion=2');
const PER_TICK = 20, TICKS = 50_000;
let i = 0;
const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
await new Promise((resolve) => {
  const tick = () => {
    for (let k = 0; k < PER_TICK; k++, i++) al.hit(target, cell, 'abcdef123456-' + i.toString(36), 200, 0.0000123, '127.0.0.1', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36', 98, 412);
    if (i >= PER_TICK * TICKS) return resolve();
    setImmediate(tick);
  };
  tick();
});
const c = process.cpuUsage(c0);
console.log(sync ? 'sync ' : 'async', kib, 'KiB: cpu µs/line', ((c.user + c.system) / (PER_TICK * TICKS)).toFixed(3));
