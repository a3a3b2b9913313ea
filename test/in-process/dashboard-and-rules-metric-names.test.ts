// Every metric the dashboard and the alert rules read is one the gateway exports, under that
// exact name: the names are gathered from a real GET /metrics of a gateway with every optional
// part configured (Redis, the change follower), not from a list kept by hand. A renamed metric
// (wikiedge_process_cpu_seconds_total became process_cpu_seconds_total) that an expression still
// used would show as "No data" in Grafana and as an alert that can never fire.
// (test/integration/dashboard-metrics.test.ts also wants samples for each, after real traffic.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import {
  allExpressions,
  dashboardConstants,
  familyOf,
  loadDashboard,
  parseScrape,
  recordedNames,
  ruleExpressions,
  type Scrape,
  selectorsOf,
  TARGET_LABELS,
  withConstants,
} from '../support/promql.js';
import { startRedis, type TestRedis } from '../support/redis.js';

describe('the dashboard and the rules read only metrics the gateway exports', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let gw: RunningGateway;
  let scrape: Scrape;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, public' });
      res.end('{}');
    });
    redis = await startRedis();
    gw = await startGateway(fake.url, {
      WIKIEDGE_REDIS_URL: redis.url,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_RC_FOLLOW: 'true',
    });
    await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`);
    scrape = parseScrape((await http(`${gw.adminUrl}/metrics`)).body);
  });
  afterAll(async () => {
    await gw?.close();
    await redis?.stop();
    await fake?.close();
  });

  const constants = dashboardConstants();
  const expressions = () => [
    ...allExpressions(loadDashboard()).map((e) => ({ where: `dashboard: ${e.where}`, expr: withConstants(e.expr, constants) })),
    ...ruleExpressions().map((e) => ({ where: `rules: ${e.where}`, expr: e.expr })),
  ];
  const recorded = recordedNames();
  /** Series Prometheus makes itself for every target: WikiedgeTargetDown reads `up`. */
  const PROMETHEUS_OWN = new Set(['up']);

  it('every metric name in an expression is a family of the scrape (or a recording rule)', () => {
    const unknown: string[] = [];
    let names = 0;
    for (const { where, expr } of expressions()) {
      for (const s of selectorsOf(expr).selectors) {
        names++;
        if (recorded.has(s.name) || PROMETHEUS_OWN.has(s.name)) continue;
        if (familyOf(scrape, s.name) === undefined) unknown.push(`${where}: ${s.name}`);
      }
    }
    expect(names).toBeGreaterThan(50);
    expect(unknown).toEqual([]);
  });

  it('every label an expression matches on exists on the metric, where the scrape has samples of it', () => {
    const wrong: string[] = [];
    for (const { where, expr } of expressions()) {
      for (const s of selectorsOf(expr).selectors) {
        const samples = scrape.samples.get(s.name) ?? [];
        if (samples.length === 0) continue;
        const have = new Set(samples.flatMap((l) => Object.keys(l)));
        for (const l of s.labels) if (!TARGET_LABELS.has(l) && !have.has(l)) wrong.push(`${where}: ${s.name}{${l}}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('reads no metric under the names it had before the standard Node.js names', () => {
    const old = expressions().filter((e) => /\bwikiedge_(process|nodejs)_/.test(e.expr));
    expect(old.map((e) => e.where)).toEqual([]);
  });
});
