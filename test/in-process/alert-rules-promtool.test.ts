// The alert rules shipped in config/prometheus/wikiedge-rules.yml are valid (promtool check
// rules), fire when they should and only then (promtool test rules with the input series of
// test/prometheus/wikiedge-rules.test.yml), cover what an operator needs (wiki down, errors, hit
// ratio collapse, cache at budget, Redis down, change follower stalled, admission rejections;
// target down, Redis and error-ratio flapping, event-loop lag, memory near the budgets, log lines dropped),
// and are loaded: the shipped Prometheus config names the file and compose mounts it there.
// Skipped, saying why, only when promtool is missing (scripts/install-system-deps.sh installs it).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot, RULES } from '../support/promql.js';

const RULE_TESTS = path.join(repoRoot, 'test/prometheus/wikiedge-rules.test.yml');
const PROMETHEUS_YML = path.join(repoRoot, 'config/prometheus/prometheus.yml');

const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtool = probe.status === 0;
const NO_PROMTOOL = 'promtool is not on the PATH (Debian: apt-get install --no-install-recommends prometheus; scripts/install-system-deps.sh)';

function run(args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd: repoRoot, timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

interface RulesFile {
  groups: {
    name: string;
    rules: { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }[];
  }[];
}
const rules = parse(readFileSync(RULES, 'utf8')) as RulesFile;
const alerts = rules.groups.flatMap((g) => g.rules.filter((r) => r.alert !== undefined));

describe('alert rules', () => {
  it('promtool check rules config/prometheus/wikiedge-rules.yml', (ctx) => {
    if (!promtool) return ctx.skip(NO_PROMTOOL);
    const r = run(['check', 'rules', RULES]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('promtool test rules: each alert fires on its input series, and not on the healthy ones', (ctx) => {
    if (!promtool) return ctx.skip(NO_PROMTOOL);
    const r = run(['test', 'rules', RULE_TESTS]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/SUCCESS/);
  });

  it('has the alerts an operator needs, each with a severity, a summary and a description', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'WikiedgeAdmissionRejections',
      'WikiedgeCacheAtBudget',
      'WikiedgeChangeFollowerJumping',
      'WikiedgeChangeFollowerStalled',
      'WikiedgeErrorRatioFlapping',
      'WikiedgeEventLoopLag',
      'WikiedgeHighErrorRatio',
      'WikiedgeHitRatioCollapse',
      'WikiedgeLogLinesDropped',
      'WikiedgeMemoryNearBudgets',
      'WikiedgeRedisDown',
      'WikiedgeRedisFlapping',
      'WikiedgeRedisShardDown',
      'WikiedgeTargetDown',
      'WikiedgeUpstreamDown',
    ]);
    for (const a of alerts) {
      expect(['critical', 'warning'], a.alert).toContain(a.labels?.['severity']);
      expect(a.annotations?.['summary'], a.alert).toBeTruthy();
      expect(a.annotations?.['description'], a.alert).toBeTruthy();
      expect(a.for, a.alert).toMatch(/^\d+m$/);
    }
    expect(alerts.find((a) => a.alert === 'WikiedgeUpstreamDown')).toMatchObject({ expr: 'wikiedge_upstream_up == 0', for: '1m' });
  });

  it('every alert is tested firing at least once', () => {
    const tests = parse(readFileSync(RULE_TESTS, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    const firing = new Set(tests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => (a.exp_alerts ?? []).length > 0).map((a) => a.alertname)));
    for (const a of alerts) expect(firing, a.alert).toContain(a.alert);
  });

  it('the shipped Prometheus config loads the rules file, and compose mounts it where the config looks', () => {
    const config = parse(readFileSync(PROMETHEUS_YML, 'utf8')) as { rule_files?: string[] };
    expect(config.rule_files).toEqual(['wikiedge-rules.yml']);
    const compose = parse(readFileSync(path.join(repoRoot, 'compose.yaml'), 'utf8')) as { services: Record<string, { volumes?: string[] }> };
    const volumes = compose.services['prometheus']!.volumes ?? [];
    expect(volumes).toContain('./config/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(volumes).toContain('./config/prometheus/wikiedge-rules.yml:/etc/prometheus/wikiedge-rules.yml:ro');
  });
});
