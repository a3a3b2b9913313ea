// SIGHUP to a cluster primary (WIKIEDGE_WORKERS=2) while clients keep sending, on kept-alive
// connections and on a new connection per request: every request is answered 200, none is
// refused or fails. The workers are replaced one at a time (the new one listens before the old
// one drains), the old ones exit 0, the reload is logged when it starts and when it ends, and
// every request is counted once in the metrics (replaced workers hand over their last counts).
//
// Outcomes are counted, never timed: the load runs until the reload has completed and every
// client has gone on sending after it, however long a busy machine takes.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK } from '../support/gateway.js';
import { reloadWiki, startLoad } from '../support/reload-load.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const KEEP_ALIVE_CLIENTS = 16;
const NEW_CONNECTION_CLIENTS = 4;

describe('SIGHUP reload under load', () => {
  let fake: FakeUpstream | undefined;
  let gw: SpawnedGateway | undefined;
  afterEach(async () => {
    if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it.runIf(built)('answers every request 200 across a reload: none refused, none failed', async () => {
    fake = await reloadWiki();
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

    const { outcomes, phase, done: load } = startLoad(g.url, { keepAlive: KEEP_ALIVE_CLIENTS, newConnections: NEW_CONNECTION_CLIENTS });

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
