// The Grafana dashboard only reads what the gateway exports: every metric name (and label) in every
// PromQL expression of config/grafana/dashboards/wikiedge.json must be in a real scrape of
// GET /metrics after a mix of traffic against the real wiki.
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type Forwarder, startForwarder } from '../support/forwarder.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { allExpressions, allPanels, familyOf, loadDashboard, parseScrape, type Scrape, selectorsOf, TARGET_LABELS } from '../support/promql.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { LAB_USER, LAB_USER_PASS, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
/**
 * Series only a gateway on a Redis Cluster has (one per shard): this gateway has one Redis, so
 * they are held to their family here; test/in-process/redis-cluster-failover.test.ts reads
 * their samples.
 */
const CLUSTER_ONLY = new Set(['wikiedge_redis_shard_up', 'wikiedge_redis_shard_errors_total']);
const wikiData = inject('wikiData');

// ------------------------------------------------------------------------------------ tests
describe('the PromQL reader used by these tests', () => {
  it('finds metric names and matcher labels, not functions, keywords, variables or durations', () => {
    const { selectors, groupingLabels } = selectorsOf(
      'histogram_quantile(0.99, sum by (le, disposition) (rate(a_bucket{x="}",y=~"$v"}[$__rate_interval]))) / on(instance) group_left(mode) b offset 5m > bool 1e3 or vector(0) + sum(c) without (z)',
    );
    expect(selectors).toEqual([
      { name: 'a_bucket', labels: ['x', 'y'] },
      { name: 'b', labels: [] },
      { name: 'c', labels: [] },
    ]);
    expect(groupingLabels).toEqual(['le', 'disposition', 'instance', 'mode', 'z']);
  });

  it('maps histogram sample names to their family only when the family is a histogram', () => {
    const scrape = parseScrape('# TYPE h histogram\nh_bucket{le="1"} 0\nh_sum 0\nh_count 0\n# TYPE c_count counter\nc_count 1\n');
    expect(familyOf(scrape, 'h_bucket')).toBe('h');
    expect(familyOf(scrape, 'h_count')).toBe('h');
    expect(familyOf(scrape, 'c_count')).toBe('c_count');
    // The family exists, but a histogram has no sample called plain `h`: the sample check catches `h`.
    expect(familyOf(scrape, 'h')).toBe('h');
    expect(scrape.samples.has('h')).toBe(false);
    expect(familyOf(scrape, 'nosuch_count')).toBeUndefined();
  });
});

describe('config/grafana/dashboards/wikiedge.json', () => {
  it('parses, and every panel has a datasource and at least one target with an expression', () => {
    const d = loadDashboard();
    const panels = allPanels(d).filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    for (const p of panels) {
      expect(p.datasource, p.title).toBeTruthy();
      const uid = typeof p.datasource === 'string' ? p.datasource : p.datasource?.uid;
      expect(uid, p.title).toMatch(/^\$\{?DS_PROMETHEUS\}?$/);
      expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) expect(t.expr, `${p.title} ${t.refId}`).toBeTruthy();
    }
    const ds = d.templating?.list.find((v) => v.name === 'DS_PROMETHEUS');
    expect(ds?.type).toBe('datasource');
    expect(ds?.query).toBe('prometheus');
    const ids = allPanels(d).map((p) => (p as { id?: number }).id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('every metric the dashboard reads is exported by the running gateway', () => {
  let fwd: Forwarder;
  let gw: RunningGateway;
  let redis: TestRedis;
  let scrape: Scrape;
  beforeAll(async () => {
    // Through a forwarder that can be cut, so an upstream failure can be made at the end; with
    // a Redis tier, whose panels read its metrics.
    fwd = await startForwarder(wiki);
    redis = await startRedis();
    gw = await startGateway(fwd.url, { WIKIEDGE_REDIS_URL: redis.url, WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret' });
    const api = (q: string, headers: Record<string, string> = {}) => http(`${gw.apiUrl}?${q}`, { headers });
    const id = randomUUID();

    // miss, then hit
    const badges = `action=wbavailablebadges&format=json&requestid=${id}`;
    expect(header(await api(badges), 'x-cache')).toBe('miss');
    expect(header(await api(badges), 'x-cache')).toBe('hit');
    // coalesced: concurrent identical misses
    const many = await Promise.all(Array.from({ length: 10 }, () => api(`action=wbavailablebadges&format=json&requestid=${id}c`)));
    expect(many.map((r) => header(r, 'x-cache'))).toContain('coalesced');
    // pass (anonymous userinfo is private) and not stored
    expect(header(await api(`action=query&meta=userinfo&format=json&requestid=${id}`), 'x-cache')).toBe('pass');
    // an API error
    const err = await api(`action=nosuch&format=json&requestid=${id}`);
    expect(header(err, 'mediawiki-api-error')).toBe('badvalue');
    // a logged-in client, logging in through the gateway (Set-Cookie handling)
    const cookie = await loginCookies(gw.url, LAB_USER, LAB_USER_PASS);
    const mine = `action=query&meta=userinfo&format=json&requestid=${id}`;
    expect(header(await api(mine, { cookie }), 'x-cache')).toBe('miss');
    expect(header(await api(mine, { cookie }), 'x-cache')).toBe('hit');
    // a request while the wiki is in debug mode: the debuginfo figures
    await setWikiToggle(wikiData, { debug: true });
    try {
      const dbg = await api(`action=query&meta=siteinfo&format=json&requestid=${id}d`);
      expect(dbg.status).toBe(200);
      expect(dbg.body).not.toContain('debuginfo');
    } finally {
      await setWikiToggle(wikiData, { debug: false });
    }
    // a change the wiki announces: a PURGE of a page URL (what $wgCdnServers sends), with an
    // answer about that page cached first, so that it invalidates one (the by-module figures)
    expect((await api(`action=query&prop=info&titles=Main_Page&format=json&requestid=${id}p`)).status).toBe(200);
    const page = await http(`${gw.url}/wiki/Main_Page`, { method: 'PURGE' });
    expect(page.status).toBe(200);
    // evictions
    const purged = await http(`${gw.adminUrl}/purge?all=1`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(purged.body).purged).toBeGreaterThan(0);
    // last: an upstream failure
    await fwd.cut();
    const failed = await api(`action=query&meta=siteinfo&format=json&requestid=${id}f`);
    expect(failed.status).toBeGreaterThanOrEqual(500);

    const res = await http(`${gw.adminUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(header(res, 'content-type')).toMatch(/^text\/plain/);
    scrape = parseScrape(res.body);
  });
  afterAll(async () => {
    await gw?.close();
    await fwd?.close();
    await redis?.stop();
  });

  it('the dashboard reads at least the core families', () => {
    const names = new Set(allExpressions(loadDashboard()).flatMap((e) => selectorsOf(e.expr).selectors.map((s) => s.name)));
    for (const family of [
      'wikiedge_requests_total',
      'wikiedge_request_duration_seconds_bucket',
      'wikiedge_upstream_requests_total',
      'wikiedge_cache_bytes',
      'wikiedge_cache_entries',
      'wikiedge_cache_budget_bytes',
      'wikiedge_cache_evictions_total',
      'wikiedge_wiki_processing_seconds_bucket',
      'wikiedge_wiki_sql_queries_bucket',
      'wikiedge_wiki_sql_seconds_bucket',
      'wikiedge_wiki_memory_bytes_bucket',
      'wikiedge_api_errors_total',
      'wikiedge_upstream_failures_total',
      'wikiedge_cookie_normalisations_total',
      'wikiedge_upstream_info',
      // Standard Node.js names (no wikiedge_ prefix), the Redis tier, the change signals, admission.
      'process_cpu_seconds_total',
      'wikiedge_event_loop_lag_seconds',
      'wikiedge_redis_up',
      'wikiedge_redis_lookups_total',
      'wikiedge_change_events_total',
      'wikiedge_invalidation_lag_seconds_bucket',
      'wikiedge_change_follower_up',
      'wikiedge_upstream_rejected_total',
      'wikiedge_response_bytes_total',
      'wikiedge_build_info',
      'wikiedge_upstream_up',
      'wikiedge_served_body_bytes_total',
    ]) {
      expect(names, family).toContain(family);
    }
  });

  it('every metric name in every expression has samples in the scrape, under that exact name', () => {
    const missing: string[] = [];
    for (const { where, expr } of allExpressions(loadDashboard())) {
      for (const s of selectorsOf(expr).selectors) {
        const family = familyOf(scrape, s.name);
        if (!family) missing.push(`${where}: ${s.name} (no such family)`);
        else if (!scrape.samples.get(s.name)?.length && !CLUSTER_ONLY.has(s.name)) missing.push(`${where}: ${s.name} (no samples)`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every label in a matcher or a grouping exists on the metrics of that expression', () => {
    const wrong: string[] = [];
    for (const { where, expr } of allExpressions(loadDashboard())) {
      const { selectors, groupingLabels } = selectorsOf(expr);
      if (selectors.some((s) => CLUSTER_ONLY.has(s.name))) continue;
      const labelsOf = (name: string) => new Set((scrape.samples.get(name) ?? []).flatMap((l) => Object.keys(l)));
      const inExpr = new Set(selectors.flatMap((s) => [...labelsOf(s.name)]));
      for (const s of selectors) {
        const have = labelsOf(s.name);
        for (const l of s.labels) if (!TARGET_LABELS.has(l) && !have.has(l)) wrong.push(`${where}: ${s.name}{${l}}`);
      }
      for (const l of groupingLabels) if (!TARGET_LABELS.has(l) && !inExpr.has(l)) wrong.push(`${where}: by ${l}`);
    }
    expect(wrong).toEqual([]);
  });

  it('the traffic shows in the families the panels read', () => {
    const has = (name: string, labels: Record<string, string>) =>
      (scrape.samples.get(name) ?? []).some((l) => Object.entries(labels).every(([k, v]) => l[k] === v));
    for (const disposition of ['hit', 'miss', 'pass', 'coalesced', 'error']) expect(has('wikiedge_requests_total', { disposition }), disposition).toBe(true);
    expect(has('wikiedge_api_errors_total', { code: 'badvalue' })).toBe(true);
    expect(has('wikiedge_cookie_normalisations_total', { event: 'session_started' })).toBe(true);
    expect(has('wikiedge_cache_evictions_total', { reason: 'purge' })).toBe(true);
    expect(has('wikiedge_debuginfo_stripped_total', { format: 'json' })).toBe(true);
    expect((scrape.samples.get('wikiedge_upstream_failures_total') ?? []).length).toBeGreaterThan(0);
    expect(scrape.samples.get('wikiedge_upstream_info')?.[0]?.['mw_version']).toMatch(/^1\.39\./);
  });
});

describe('the error and offload panels stay truthful when a client gives up', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream(() => {
      /* never answers: the client gives up first */
    });
    gw = await startGateway(fake.url);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const text = (await http(`${gw.adminUrl}/metrics`)).body;
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(' ').pop());
    }
    return sum;
  };

  it('a POST abandoned by its client is counted once in requests_total and is no API or upstream error', async () => {
    const before = {
      requests: await metric('wikiedge_requests_total'),
      apiErrors: await metric('wikiedge_api_errors_total'),
      failures: await metric('wikiedge_upstream_failures_total'),
    };
    const controller = new AbortController();
    const pending = request(`${gw.apiUrl}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=query&meta=siteinfo&format=json',
      signal: controller.signal,
    }).catch(() => undefined);
    for (let i = 0; i < 100 && fake.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(fake.requests.length).toBe(1);
    controller.abort();
    await pending;
    await new Promise((r) => setTimeout(r, 300));
    const after = {
      requests: await metric('wikiedge_requests_total'),
      apiErrors: await metric('wikiedge_api_errors_total'),
      failures: await metric('wikiedge_upstream_failures_total'),
    };
    // A client leaving is not the wiki failing: not an API error (today: +1
    // wikiedge-upstream-unreachable, from a TypeError in fromUpstreamFailure), not an upstream failure.
    expect(after.apiErrors - before.apiErrors).toBe(0);
    expect(after.failures - before.failures).toBe(0);
    // ... but it was a client request, and it made an upstream request: offload = 1 - upstream/requests
    // only holds if both count it (today: requests_total does not move, onResponse never runs).
    expect(after.requests - before.requests).toBe(1);
  });
});
