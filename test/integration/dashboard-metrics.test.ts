// The Grafana dashboard only reads what the gateway exports: every metric name (and label) in every
// PromQL expression of config/grafana/dashboards/wikiedge.json must be in a real scrape of
// GET /metrics after a mix of traffic against the real wiki.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type Forwarder, startForwarder } from '../support/forwarder.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { LAB_USER, LAB_USER_PASS, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DASHBOARD = path.join(repoRoot, 'config/grafana/dashboards/wikiedge.json');

// ------------------------------------------------------------------------------ scrape parsing
interface Scrape {
  /** family name -> TYPE */
  types: Map<string, string>;
  /** sample name (e.g. x_bucket) -> label sets */
  samples: Map<string, Record<string, string>[]>;
}

function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const samples = new Map<string, Record<string, string>[]>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    const list = samples.get(m[1]!) ?? [];
    list.push(labels);
    samples.set(m[1]!, list);
  }
  return { types, samples };
}

/** The family a sample name belongs to: histograms are exported as name_bucket/_sum/_count. */
function familyOf(scrape: Scrape, sample: string): string | undefined {
  if (scrape.types.has(sample)) return sample;
  const m = /^(.*)_(bucket|sum|count)$/.exec(sample);
  if (!m) return undefined;
  const type = scrape.types.get(m[1]!);
  if (type === 'histogram') return m[1];
  if (type === 'summary' && m[2] !== 'bucket') return m[1];
  return undefined;
}

// ------------------------------------------------------------------------------ PromQL parsing
interface Selector {
  name: string;
  /** label names used in the selector's matchers */
  labels: string[];
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'atan2',
]);
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

type Token =
  | { kind: 'ident'; text: string }
  | { kind: 'matchers'; text: string }
  | { kind: 'punct'; text: string }
  | { kind: 'other' };

function tokenize(expr: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const skipString = (at: number): number => {
    const quote = expr[at]!;
    let j = at + 1;
    while (j < expr.length && expr[j] !== quote) j += expr[j] === '\\' && quote !== '`' ? 2 : 1;
    if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
    return j + 1;
  };
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '"' || c === "'" || c === '`') {
      i = skipString(i);
      out.push({ kind: 'other' });
    } else if (c === '{') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== '}') j = /["'`]/.test(expr[j]!) ? skipString(j) : j + 1;
      if (j >= expr.length) throw new Error(`unterminated { in ${expr}`);
      out.push({ kind: 'matchers', text: expr.slice(i + 1, j) });
      i = j + 1;
    } else if (c === '[') {
      const j = expr.indexOf(']', i);
      if (j === -1) throw new Error(`unterminated [ in ${expr}`);
      out.push({ kind: 'other' });
      i = j + 1;
    } else if (c === '$') {
      // Grafana variables: $var, ${var}, ${var:fmt}, $__rate_interval
      const m = /^\$(\{[^}]*\}|\w+)/.exec(expr.slice(i));
      if (!m) throw new Error(`bad variable in ${expr}`);
      out.push({ kind: 'other' });
      i += m[0].length;
    } else if (/[0-9.]/.test(c)) {
      const m = /^[0-9.]+(e[+-]?[0-9]+)?[a-zA-Z]*/.exec(expr.slice(i))!;
      out.push({ kind: 'other' });
      i += m[0].length;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i))!;
      out.push({ kind: 'ident', text: m[0] });
      i += m[0].length;
    } else {
      out.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return out;
}

function matcherLabels(text: string): string[] {
  const labels: string[] = [];
  let rest = text;
  while (rest.trim() !== '') {
    const m = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*,?/.exec(
      rest,
    );
    if (!m) throw new Error(`unparsable matchers: {${text}}`);
    labels.push(m[1]!);
    rest = rest.slice(m[0].length);
  }
  return labels;
}

/** Every metric selector in a PromQL expression (functions, keywords and grouping labels excluded). */
function selectorsOf(expr: string): { selectors: Selector[]; groupingLabels: string[] } {
  const tokens = tokenize(expr);
  const selectors: Selector[] = [];
  const groupingLabels: string[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k]!;
    const next = tokens[k + 1];
    if (tok.kind === 'matchers') throw new Error(`selector without a metric name in ${expr}`);
    if (tok.kind !== 'ident') continue;
    if (LABEL_LISTS.has(tok.text) && next?.kind === 'punct' && next.text === '(') {
      let j = k + 2;
      for (; j < tokens.length; j++) {
        const t = tokens[j]!;
        if (t.kind === 'punct' && t.text === ')') break;
        if (t.kind === 'ident') groupingLabels.push(t.text);
      }
      k = j;
      continue;
    }
    if (KEYWORDS.has(tok.text)) continue;
    if (next?.kind === 'punct' && next.text === '(') continue; // a function or an aggregation
    if (next?.kind === 'ident' && LABEL_LISTS.has(next.text)) continue; // `sum by (x) (...)`
    const labels = next?.kind === 'matchers' ? matcherLabels(next.text) : [];
    if (next?.kind === 'matchers') k++;
    selectors.push({ name: tok.text, labels });
  }
  return { selectors, groupingLabels };
}

interface Panel {
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string } | string | null;
  targets?: { expr?: string; refId?: string }[];
  panels?: Panel[];
}
interface Dashboard {
  panels: Panel[];
  templating?: { list: { type: string; name: string; query?: unknown; definition?: string }[] };
}

function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
}

function allPanels(d: Dashboard): Panel[] {
  return d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Every PromQL text in the dashboard: panel targets and `label_values(metric, label)` variables. */
function allExpressions(d: Dashboard): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const p of allPanels(d)) {
    for (const t of p.targets ?? []) if (t.expr) out.push({ where: `${p.title} ${t.refId}`, expr: t.expr });
  }
  for (const v of d.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const text = typeof v.query === 'string' ? v.query : (v.query as { query?: string })?.query;
    const m = /^label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$/.exec(text ?? '');
    if (m) out.push({ where: `variable ${v.name}`, expr: m[1]! });
  }
  return out;
}

/** Labels Prometheus adds at scrape time: never in the gateway's own output. */
const TARGET_LABELS = new Set(['instance', 'job']);

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
    const scrape = parseScrape(
      '# TYPE h histogram\nh_bucket{le="1"} 0\nh_sum 0\nh_count 0\n# TYPE c_count counter\nc_count 1\n',
    );
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
  let scrape: Scrape;
  beforeAll(async () => {
    // Through a forwarder that can be cut, so an upstream failure can be made at the end.
    fwd = await startForwarder(wiki);
    gw = await startGateway(fwd.url);
    const api = (q: string, headers: Record<string, string> = {}) =>
      http(`${gw.apiUrl}?${q}`, { headers });
    const id = randomUUID();

    // miss, then hit
    const badges = `action=wbavailablebadges&format=json&requestid=${id}`;
    expect(header(await api(badges), 'x-cache')).toBe('miss');
    expect(header(await api(badges), 'x-cache')).toBe('hit');
    // coalesced: concurrent identical misses
    const many = await Promise.all(
      Array.from({ length: 10 }, () => api(`action=wbavailablebadges&format=json&requestid=${id}c`)),
    );
    expect(many.map((r) => header(r, 'x-cache'))).toContain('coalesced');
    // pass (anonymous userinfo is private) and not stored
    expect(header(await api(`action=query&meta=userinfo&format=json&requestid=${id}`), 'x-cache')).toBe(
      'pass',
    );
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
  });

  it('the dashboard reads at least the core families', () => {
    const names = new Set(
      allExpressions(loadDashboard()).flatMap((e) => selectorsOf(e.expr).selectors.map((s) => s.name)),
    );
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
        else if (!scrape.samples.get(s.name)?.length) missing.push(`${where}: ${s.name} (no samples)`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every label in a matcher or a grouping exists on the metrics of that expression', () => {
    const wrong: string[] = [];
    for (const { where, expr } of allExpressions(loadDashboard())) {
      const { selectors, groupingLabels } = selectorsOf(expr);
      const labelsOf = (name: string) =>
        new Set((scrape.samples.get(name) ?? []).flatMap((l) => Object.keys(l)));
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
    for (const disposition of ['hit', 'miss', 'pass', 'coalesced', 'error'])
      expect(has('wikiedge_requests_total', { disposition }), disposition).toBe(true);
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
