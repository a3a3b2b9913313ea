// A hit ratio counts every answer that came from the cache. The dashboard once matched
// `disposition=~"hit|stale|coalesced"` and never counted `hit-shared` (a replica showed 0.61 for
// a true 0.87). Now the dashboard says the hit dispositions once (its hit_dispositions constant)
// and the rules once (wikiedge:hits:rate5m), both exactly src/words/outcomes.ts HIT_DISPOSITIONS, and no
// expression anywhere matches some hit dispositions but not all of them.
import { describe, expect, it } from 'vitest';
import { DISPOSITIONS, HIT_DISPOSITIONS } from '../../src/words/outcomes.js';
import {
  allExpressions,
  allPanels,
  dashboardConstants,
  loadDashboard,
  type Matcher,
  ruleExpressions,
  selectorMatchers,
  withConstants,
} from '../support/promql.js';

/** The dispositions a `disposition` matcher selects (Prometheus regexes are anchored, RE2). */
function selected(m: Matcher): string[] {
  const matches = (d: string) => (m.op === '=' || m.op === '!=' ? d === m.value : new RegExp(`^(?:${m.value})$`).test(d));
  const positive = m.op === '=' || m.op === '=~';
  return DISPOSITIONS.filter((d) => matches(d) === positive);
}

const constants = dashboardConstants();
const everywhere = [
  ...allExpressions(loadDashboard()).map((e) => ({ where: `dashboard: ${e.where}`, expr: withConstants(e.expr, constants) })),
  ...ruleExpressions().map((e) => ({ where: `rules: ${e.where}`, expr: e.expr })),
];
const dispositionMatchers = everywhere.flatMap(({ where, expr }) =>
  selectorMatchers(expr).flatMap((s) => s.matchers.filter((m) => m.label === 'disposition').map((m) => ({ where, matcher: m }))),
);

describe('hit dispositions in the dashboard and the rules', () => {
  it('words/outcomes.ts says which dispositions are hits, and they are dispositions', () => {
    expect(HIT_DISPOSITIONS.length).toBeGreaterThan(0);
    for (const d of HIT_DISPOSITIONS) expect(DISPOSITIONS).toContain(d);
    expect(HIT_DISPOSITIONS).toContain('hit-shared');
  });

  it('the dashboard constant hit_dispositions matches exactly the hit dispositions', () => {
    const value = constants.get('hit_dispositions');
    expect(value).toBeDefined();
    expect(selected({ label: 'disposition', op: '=~', value: value! })).toEqual([...HIT_DISPOSITIONS]);
  });

  it('the rules count exactly the hit dispositions as hits', () => {
    const hits = ruleExpressions().find((e) => e.where.endsWith('wikiedge:hits:rate5m'));
    expect(hits).toBeDefined();
    const [m] = selectorMatchers(hits!.expr).flatMap((s) => s.matchers.filter((x) => x.label === 'disposition'));
    expect(selected(m!)).toEqual([...HIT_DISPOSITIONS]);
  });

  it('no expression matches some hit dispositions but not all', () => {
    expect(dispositionMatchers.length).toBeGreaterThan(4);
    const partial = dispositionMatchers.filter(({ matcher }) => {
      const hits = selected(matcher).filter((d) => HIT_DISPOSITIONS.includes(d as (typeof HIT_DISPOSITIONS)[number]));
      return hits.length > 0 && hits.length < HIT_DISPOSITIONS.length;
    });
    expect(partial.map((p) => `${p.where}: disposition${p.matcher.op}"${p.matcher.value}"`)).toEqual([]);
  });

  it('every hit-ratio and hit-latency panel reads the constant', () => {
    const panels = allPanels(loadDashboard()).filter((p) => /hit ratio|from the cache/i.test(p.title ?? ''));
    expect(panels.map((p) => p.title)).toEqual(expect.arrayContaining(['Hit ratio', 'Hit ratio over time']));
    expect(panels.some((p) => /latency/i.test(p.title ?? ''))).toBe(true);
    for (const p of panels) for (const t of p.targets ?? []) expect(t.expr, `${p.title} ${t.refId}`).toContain('$hit_dispositions');
  });
});
