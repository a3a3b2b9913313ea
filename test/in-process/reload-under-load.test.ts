// SIGHUP to a cluster primary (WIKIEDGE_WORKERS=2) while clients keep sending, on kept-alive
// connections and on a new connection per request: every request is answered 200, none is
// refused or fails. The workers are replaced one at a time (the new one listens before the old
// one drains), the old ones exit 0, the reload is logged when it starts and when it ends, and
// every request is counted once in the metrics (replaced workers hand over their last counts).
//
// Outcomes are counted, never timed: the load runs until the reload has completed and every
// client has gone on sending after it, however long a busy machine takes.
import { Client, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK } from '../support/gateway.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const KEEP_ALIVE_CLIENTS = 16;
const NEW_CONNECTION_CLIENTS = 4;
/** Requests every client still sends once the reload has completed. */
const AFTER_RELOAD = 20;

interface Outcomes {
  statuses: Record<string, number>;
  errors: Record<string, number>;
  /** Which process answered: the per-process prefix of generated request ids. */
  servedBy: Set<string>;
}

function count(o: Outcomes, status: number | undefined, error: string | undefined, requestId: unknown): void {
  if (status !== undefined) o.statuses[status] = (o.statuses[status] ?? 0) + 1;
  if (error !== undefined) o.errors[error] = (o.errors[error] ?? 0) + 1;
  if (typeof requestId === 'string') o.servedBy.add(requestId.split('-')[0]!);
}

/** The wiki: shared answers (hits), private ones (passes), and pages streamed through. */
function wiki(): Promise<FakeUpstream> {
  return startFakeUpstream((req, res) => {
    const url = req.url ?? '/';
    if (url.includes('kind=hit')) {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    } else if (url.includes('kind=pass')) {
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
          res.end('{"batchcomplete":true}');
        },
        5 + Math.floor(Math.random() * 20),
      );
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>');
      setTimeout(() => res.end('</html>'), 10);
    }
  });
}

function pathFor(n: number, i: number): string {
  const paths = [
    `/w/api.php?action=query&meta=siteinfo&format=json&kind=hit&c=${n % 5}`,
    `/w/api.php?action=query&list=filearchive&format=json&kind=pass&c=${n}`,
    `/w/index.php?title=Main_Page&kind=stream&c=${n}`,
  ];
  return paths[i % paths.length]!;
}

describe('SIGHUP reload under load', () => {
  let fake: FakeUpstream | undefined;
  let gw: SpawnedGateway | undefined;
  afterEach(async () => {
    if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it.runIf(built)('answers every request 200 across a reload: none refused, none failed', async () => {
    fake = await wiki();
    gw = await spawnGateway(fake.url, { ...MANY_CLIENTS_FROM_LOOPBACK, WIKIEDGE_WORKERS: '2' });
    const g = gw;
    const logs = () =>
      g
        .stdout()
        .split('\n')
        .slice(0, -1)
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const logged = (msg: string) => logs().filter((l) => l['msg'] === msg);
    const until = async (check: () => boolean) => {
      while (!check()) {
        if (g.child.exitCode !== null) throw new Error(`the gateway exited: ${g.stderr()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await until(() => logged('worker listening').length === 2);
    const before = new Set(logged('worker listening').map((l) => l['pid']));

    const outcomes: Outcomes = { statuses: {}, errors: {}, servedBy: new Set() };
    const phase = { reloaded: false, sentKeepAlive: 0 };
    const keepAlive = async (n: number) => {
      const client = new Client(g.url, { keepAliveTimeout: 30_000 });
      let after = 0;
      try {
        for (let i = n; after < AFTER_RELOAD; i++) {
          if (phase.reloaded) after++;
          try {
            const res = await client.request({ method: 'GET', path: pathFor(n, i) });
            await res.body.text();
            count(outcomes, res.statusCode, undefined, res.headers['x-request-id']);
          } catch (err) {
            count(outcomes, undefined, (err as { code?: string }).code ?? (err as Error).name, undefined);
          }
          phase.sentKeepAlive++;
        }
      } finally {
        await client.close();
      }
    };
    const newConnections = async (n: number) => {
      let after = 0;
      for (let i = n; after < AFTER_RELOAD; i++) {
        if (phase.reloaded) after++;
        try {
          const res = await request(`${g.url}${pathFor(n, i)}`, { headers: { connection: 'close' } });
          await res.body.text();
          count(outcomes, res.statusCode, undefined, res.headers['x-request-id']);
        } catch (err) {
          count(outcomes, undefined, (err as { code?: string }).code ?? (err as Error).name, undefined);
        }
      }
    };
    const load = Promise.all([
      ...Array.from({ length: KEEP_ALIVE_CLIENTS }, (_, n) => keepAlive(n)),
      ...Array.from({ length: NEW_CONNECTION_CLIENTS }, (_, n) => newConnections(KEEP_ALIVE_CLIENTS + n)),
    ]);

    // The load is under way on both old workers before the signal.
    await until(() => phase.sentKeepAlive >= 10 * KEEP_ALIVE_CLIENTS);
    const servedBefore = new Set(outcomes.servedBy);
    g.child.kill('SIGHUP');
    await until(() => logged('reload complete').length === 1);
    phase.reloaded = true;
    await load;

    // Every request was answered, with a 200.
    expect(outcomes.errors).toEqual({});
    expect(Object.keys(outcomes.statuses)).toEqual(['200']);
    // Both workers were replaced: two new pids listening, the old ones exited 0 after draining.
    const listening = logged('worker listening');
    expect(listening).toHaveLength(4);
    const replacements = listening.slice(2).map((l) => l['pid']);
    expect(replacements.every((pid) => !before.has(pid))).toBe(true);
    expect(logged('worker exited').map((l) => [before.has(l['pid']), l['code']])).toEqual([
      [true, 0],
      [true, 0],
    ]);
    expect(logged('worker died: restarting it')).toEqual([]);
    // Old and new processes answered: the load ran through the reload.
    expect(servedBefore.size).toBeGreaterThanOrEqual(1);
    expect([...outcomes.servedBy].filter((p) => !servedBefore.has(p)).length).toBeGreaterThanOrEqual(1);
    // One line when it starts, one when it ends.
    expect(logs().find((l) => l['signal'] === 'SIGHUP')?.['msg']).toMatch(/^reload: re-reading the configuration/);
    expect(logged('reload complete')[0]).toMatchObject({ replaced: 2, changed: [] });

    // Every request is counted once in the admin /metrics: the replaced workers handed over what
    // they counted after the last scrape before they exited.
    const answered = Object.values(outcomes.statuses).reduce((a, b) => a + b, 0);
    const metrics = await (await request(`${g.adminUrl}/metrics`)).body.text();
    const counted = [...metrics.matchAll(/^wikiedge_requests_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(counted).toBe(answered);

    g.child.kill('SIGTERM');
    expect(await g.exited).toBe(0);
    expect(g.stderr()).toBe('');
  });
});
