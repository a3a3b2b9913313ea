// promtool (Debian: `apt-get install prometheus`) checks the Prometheus config of the compose demo,
// and parses every PromQL expression of the Grafana dashboard (as recording rules, the only
// offline PromQL parser it has). Skipped, with the reason, when promtool is not on the PATH.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../support/scratch.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PROMETHEUS_YML = path.join(repoRoot, 'config/prometheus/prometheus.yml');
const DASHBOARD = path.join(repoRoot, 'config/grafana/dashboards/wikiedge.json');

const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtool = probe.status === 0 ? probe.stdout.split('\n')[0] : undefined;
const SKIP_REASON = 'promtool is not on the PATH (Debian: apt-get install --no-install-recommends prometheus, ~19 MB download)';

function run(args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd: repoRoot, timeout: 30_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

interface Panel {
  title?: string;
  targets?: { expr?: string; refId?: string }[];
  panels?: Panel[];
}

/** Grafana's variables replaced by values Prometheus accepts, as Grafana would interpolate them. */
function interpolate(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}|\$__interval|\$\{__interval\}/g, '1m')
    .replace(/\$__range|\$\{__range\}/g, '1h')
    .replace(/\$\{?instance\}?/g, '.*');
}

describe(`Prometheus config and the dashboard’s PromQL, checked by ${promtool ?? 'promtool (missing)'}`, () => {
  it('promtool check config config/prometheus/prometheus.yml', (ctx) => {
    if (!promtool) return ctx.skip(SKIP_REASON);
    // promtool checks that the scrape's credentials_file exists: the secret compose mounts at
    // /run/secrets is stood in for by a scratch file (the rules file is copied beside it).
    const dir = scratchDir('wikiedge-promconfig-');
    try {
      const token = path.join(dir, 'wikiedge_metrics_token');
      writeFileSync(token, 'metrics-token-for-the-check-0123\n');
      writeFileSync(path.join(dir, 'wikiedge-rules.yml'), readFileSync(path.join(repoRoot, 'config/prometheus/wikiedge-rules.yml')));
      const text = readFileSync(PROMETHEUS_YML, 'utf8');
      expect(text).toContain('credentials_file: /run/secrets/wikiedge_metrics_token');
      const copy = path.join(dir, 'prometheus.yml');
      writeFileSync(copy, text.replaceAll('/run/secrets/wikiedge_metrics_token', token));
      const r = run(['check', 'config', copy]);
      expect(r.status, r.output).toBe(0);
      expect(r.output).toMatch(/SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the config scrapes the gateway’s admin listener at /metrics', () => {
    const text = readFileSync(PROMETHEUS_YML, 'utf8');
    expect(text).toMatch(/job_name:\s*wikiedge/);
    expect(text).not.toMatch(/metrics_path:\s*(?!\/metrics\b)\S/);
  });

  it('every expression in config/grafana/dashboards/wikiedge.json is valid PromQL', (ctx) => {
    if (!promtool) return ctx.skip(SKIP_REASON);
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
    const exprs = dashboard.panels
      .flatMap((p) => [p, ...(p.panels ?? [])])
      .flatMap((p) => (p.targets ?? []).map((t) => ({ where: `${p.title} ${t.refId}`, expr: t.expr ?? '' })));
    expect(exprs.length).toBeGreaterThan(10);
    const dir = scratchDir('wikiedge-promql-');
    try {
      // One group per expression, so a failure names the panel.
      const yaml = [
        'groups:',
        ...exprs.flatMap((e, i) => [
          `  - name: ${JSON.stringify(e.where)}`,
          '    rules:',
          `      - record: wikiedge:dashboard_check_${i}`,
          `        expr: ${JSON.stringify(interpolate(e.expr))}`,
        ]),
      ].join('\n');
      const file = path.join(dir, 'dashboard-rules.yml');
      writeFileSync(file, `${yaml}\n`);
      const r = run(['check', 'rules', file]);
      expect(r.status, r.output).toBe(0);
      expect(r.output).toMatch(new RegExp(`SUCCESS: ${exprs.length} rules found`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
