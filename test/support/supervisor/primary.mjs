// A primary that runs src/cluster/supervisor.ts (built, dist/) with one tiny worker that listens,
// replaces it once, and kills one of the two during the hand-over: `replacement` or `old`
// (argv[2]). Prints one JSON line: the outcome, and what the supervisor says afterwards.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import pino from 'pino';

if (cluster.isWorker) {
  createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
} else {
  const { Supervisor } = await import(new URL('../../../dist/cluster/supervisor.js', import.meta.url).href);
  const victim = process.argv[2];
  const supervisor = new Supervisor({
    workers: 1,
    env: {},
    log: pino({ level: 'silent' }),
    onMessage: () => undefined,
    onExit: () => undefined,
    handOver: async (old, replacement) => {
      const dying = victim === 'old' ? old : replacement;
      const gone = new Promise((resolve) => dying.once('exit', resolve));
      dying.process.kill('SIGKILL');
      await gone;
    },
  });
  await supervisor.start();
  const before = supervisor.listening()[0];
  const outcome = await supervisor.replaceAll(5_000);
  const after = supervisor.listening();
  console.log(
    JSON.stringify({
      outcome,
      listening: after.length,
      sameWorker: after[0] === before,
      alive: after.every((w) => !w.isDead()),
      draining: supervisor.draining().length,
    }),
  );
  await supervisor.stop(5_000);
  process.exit(0);
}
