// Reading what Prometheus reads: the text exposition of GET /metrics (families, samples and their
// labels) and the PromQL of the Grafana dashboard and the rules file (metric selectors, their
// matchers, grouping labels), for the tests that hold the dashboard and the alerts to what the
// gateway exports. A small tokenizer, not a PromQL parser: enough for expressions written here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const repoRoot = path.resolve(import.meta.dirname, '../..');
export const DASHBOARD = path.join(repoRoot, 'config/grafana/dashboards/wikiedge.json');
export const RULES = path.join(repoRoot, 'config/prometheus/wikiedge-rules.yml');

// ------------------------------------------------------------------------------ scrape parsing
export interface Scrape {
  /** family name -> TYPE */
  types: Map<string, string>;
  /** sample name (e.g. x_bucket) -> label sets */
  samples: Map<string, Record<string, string>[]>;
}

export function parseScrape(text: string): Scrape {
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
export function familyOf(scrape: Scrape, sample: string): string | undefined {
  if (scrape.types.has(sample)) return sample;
  const m = /^(.*)_(bucket|sum|count)$/.exec(sample);
  if (!m) return undefined;
  const type = scrape.types.get(m[1]!);
  if (type === 'histogram') return m[1];
  if (type === 'summary' && m[2] !== 'bucket') return m[1];
  return undefined;
}

// ------------------------------------------------------------------------------ PromQL parsing
export interface Selector {
  name: string;
  /** label names used in the selector's matchers */
  labels: string[];
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2']);
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

type Token = { kind: 'ident'; text: string } | { kind: 'matchers'; text: string } | { kind: 'punct'; text: string } | { kind: 'other' };

export function tokenize(expr: string): Token[] {
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

export function matcherLabels(text: string): string[] {
  return matchersOf(text).map((m) => m.label);
}

export interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  /** The string's value (quotes removed, escapes undone). */
  readonly value: string;
}

export function matchersOf(text: string): Matcher[] {
  const out: Matcher[] = [];
  let rest = text;
  while (rest.trim() !== '') {
    const m = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*,?/.exec(rest);
    if (!m) throw new Error(`unparsable matchers: {${text}}`);
    const quoted = m[3]!;
    const value = quoted.startsWith('`') ? quoted.slice(1, -1) : quoted.slice(1, -1).replace(/\\(.)/g, '$1');
    out.push({ label: m[1]!, op: m[2] as Matcher['op'], value });
    rest = rest.slice(m[0].length);
  }
  return out;
}

/** Every `{...}` matcher list of an expression, with the metric it selects. */
export function selectorMatchers(expr: string): { name: string; matchers: Matcher[] }[] {
  const tokens = tokenize(expr);
  const out: { name: string; matchers: Matcher[] }[] = [];
  tokens.forEach((t, k) => {
    const next = tokens[k + 1];
    if (t.kind === 'ident' && next?.kind === 'matchers') out.push({ name: t.text, matchers: matchersOf(next.text) });
  });
  return out;
}

/** Every metric selector in a PromQL expression (functions, keywords and grouping labels excluded). */
export function selectorsOf(expr: string): { selectors: Selector[]; groupingLabels: string[] } {
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

export interface Panel {
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string } | string | null;
  targets?: { expr?: string; refId?: string }[];
  panels?: Panel[];
}
export interface Dashboard {
  panels: Panel[];
  templating?: { list: { type: string; name: string; query?: unknown; definition?: string }[] };
}

export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
}

export function allPanels(d: Dashboard): Panel[] {
  return d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Every PromQL text in the dashboard: panel targets and `label_values(metric, label)` variables. */
export function allExpressions(d: Dashboard): { where: string; expr: string }[] {
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
export const TARGET_LABELS = new Set(['instance', 'job']);

/** Every expression of the rules file (recording rules and alerts). */
export function ruleExpressions(file = RULES): { where: string; expr: string }[] {
  const doc = parse(readFileSync(file, 'utf8')) as { groups: { name: string; rules: { record?: string; alert?: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ where: `${g.name} ${r.record ?? r.alert}`, expr: String(r.expr) })));
}

/** Names the rules file records (level:metric:operation): Prometheus's own, not the gateway's. */
export function recordedNames(file = RULES): Set<string> {
  const doc = parse(readFileSync(file, 'utf8')) as { groups: { rules: { record?: string }[] }[] };
  return new Set(doc.groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : []))));
}

/** The dashboard's constant variables (name -> value), as Grafana interpolates them. */
export function dashboardConstants(d: Dashboard = loadDashboard()): Map<string, string> {
  return new Map((d.templating?.list ?? []).filter((v) => v.type === 'constant').map((v) => [v.name, String(v.query ?? '')] as [string, string]));
}

/** An expression with the dashboard's constants put in, `$var` and `${var}` alike. */
export function withConstants(expr: string, constants: Map<string, string>): string {
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a: string | undefined, b: string | undefined) => constants.get((a ?? b)!) ?? whole);
}
