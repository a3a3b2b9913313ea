// Every counter and histogram the admin /metrics exposes stays monotonic across two reloads
// under load, scraped every 100 ms as a busy Prometheus might: in the default deployment (one
// process whose gateway is replaced) and with WIKIEDGE_WORKERS=2 (workers replaced one at a time,
// each handing over its last counts). A series that goes down, or vanishes, is what Prometheus
// reads as a counter reset, and rate() then counts the whole value again.
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { cumulativeSeries, decreases } from '../support/counters.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK } from '../support/gateway.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const CLIENTS = 6;
const SCRAPE_EVERY_MS = 100;

describe.runIf(built).each([
  ['the default deployment', {}],
  ['WIKIEDGE_WORKERS=2', { WIKIEDGE_WORKERS: '2' }],
])('counters across two reloads: %s', (_name, env: Record<string, string>) => {
  let fake: FakeUpstream | undefined;
  let gw: SpawnedGateway | undefined;
  afterEach(async () => {
    if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it(`no counter goes down or vanishes between two scrapes (${_name})`, async () => {
    fake = await startFakeUpstream((req, res) => {
      const shared = (req.url ?? '').includes('kind=hit');
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': shared ? 's-maxage=60, public' : 'private, max-age=0' });
      res.end('{"batchcomplete":true}');
    });
    gw = await spawnGateway(fake.url, { ...MANY_CLIENTS_FROM_LOOPBACK, ...env });
    const g = gw;

    const state = { stop: false, answered: 0, failed: 0 };
    const client = async (n: number) => {
      const c = new Client(g.url, { keepAliveTimeout: 30_000 });
      try {
        for (let i = 0; !state.stop; i++) {
          const kind = i % 2 === 0 ? 'hit' : 'pass';
          try {
            const res = await c.request({ method: 'GET', path: `/w/api.php?action=query&meta=siteinfo&format=json&kind=${kind}&c=${n}` });
            await res.body.text();
            state.answered++;
          } catch {
            state.failed++;
          }
        }
      } finally {
        await c.close();
      }
    };
    const found: string[] = [];
    let scrapes = 0;
    const scraper = async () => {
      let before: Map<string, number> | undefined;
      while (!state.stop) {
        const res = await http(`${g.adminUrl}/metrics`);
        expect(res.status).toBe(200);
        const now = cumulativeSeries(res.body);
        if (before) found.push(...decreases(before, now));
        before = now;
        scrapes++;
        await new Promise((r) => setTimeout(r, SCRAPE_EVERY_MS));
      }
    };
    const running = Promise.all([...Array.from({ length: CLIENTS }, (_, n) => client(n)), scraper()]);

    for (let reload = 1; reload <= 2; reload++) {
      const answered = state.answered;
      await untilLogged(g, () => state.answered >= answered + 200);
      g.child.kill('SIGHUP');
      await untilLogged(g, () => logged(g, 'reload complete').length === reload);
    }
    const [answered, scraped] = [state.answered, scrapes];
    await untilLogged(g, () => state.answered >= answered + 200 && scrapes >= scraped + 3);
    state.stop = true;
    await running;

    expect(state.failed).toBe(0);
    expect(found).toEqual([]);
    // Every answered request is counted, once. A request is counted when its answer has been
    // written (steps/request-record.ts), which on a busy machine can come after its client read
    // it: the count is waited for (a count lost across a reload never arrives), then must be exact.
    const total = async () =>
      [...(await http(`${g.adminUrl}/metrics`)).body.matchAll(/^wikiedge_requests_total\{[^}]*\} (\d+)$/gm)].reduce((s, m) => s + Number(m[1]), 0);
    await untilLogged(g, async () => (await total()) >= state.answered, 10_000).catch(() => undefined);
    expect(await total()).toBe(state.answered);

    g.child.kill('SIGTERM');
    expect(await g.exited).toBe(0);
  });
});
