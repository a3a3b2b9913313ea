// compose.yaml, the Prometheus and Grafana provisioning, the Dockerfile and the README agree.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_KEYS, loadConfig } from '../../src/config.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');
type Service = { environment?: Record<string, string>; ports?: string[]; volumes?: string[]; build?: unknown };
const compose = parse(read('compose.yaml')) as { services: Record<string, Service> };
const defaults = loadConfig({ WIKIEDGE_UPSTREAM: 'http://wiki' });

describe('compose stack', () => {
  it('has the wiki, the gateway, Prometheus and Grafana', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['grafana', 'mediawiki', 'prometheus', 'wikiedge']);
    expect(compose.services['wikiedge']!.build).toBe('.');
  });

  it('sets only configuration keys the gateway knows', () => {
    for (const key of Object.keys(compose.services['wikiedge']!.environment ?? {})) expect(CONFIG_KEYS).toContain(key);
  });

  it('publishes the public and admin ports the gateway listens on', () => {
    const ports = compose.services['wikiedge']!.ports ?? [];
    expect(ports.some((p) => p.endsWith(`:${defaults.port}`))).toBe(true);
    expect(ports.some((p) => p.endsWith(`:${defaults.adminPort}`))).toBe(true);
    expect(read('Dockerfile')).toMatch(new RegExp(`EXPOSE ${defaults.port} ${defaults.adminPort}`));
  });

  it('lets Prometheus scrape the admin listener', () => {
    const prom = parse(read('config/prometheus/prometheus.yml')) as {
      scrape_configs: { metrics_path: string; static_configs: { targets: string[] }[] }[];
    };
    const job = prom.scrape_configs[0]!;
    expect(job.metrics_path).toBe('/metrics');
    expect(job.static_configs[0]!.targets).toContain(`wikiedge:${defaults.adminPort}`);
    expect(compose.services['prometheus']!.volumes).toContain('./config/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
  });

  it('mounts the dashboard where the Grafana provider looks for it', () => {
    const provider = parse(read('config/grafana/provisioning/dashboards/wikiedge.yaml')) as {
      providers: { options: { path: string } }[];
    };
    const dashboardsPath = provider.providers[0]!.options.path;
    expect(compose.services['grafana']!.volumes).toContain(`./config/grafana/dashboards:${dashboardsPath}:ro`);
    expect(() => JSON.parse(read('config/grafana/dashboards/wikiedge.json'))).not.toThrow();
  });

  it('is described in the README: the files and ports it names exist', () => {
    const readme = read('README.md');
    expect(readme).toContain('compose.yaml');
    expect(readme).toContain('deploy/mediawiki/LocalSettings.php');
    expect(readme).toContain('scripts/verify-image.sh');
    for (const port of ['8080', '8081', '9090', '3000']) expect(readme).toContain(port);
  });
});
