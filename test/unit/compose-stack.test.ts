// compose.yaml, its podman override, the Prometheus and Grafana provisioning, the wiki's
// LocalSettings.php, the Dockerfile and the README agree. Static: scripts/verify-compose.sh
// starts the stack for real (without Grafana, which has no stand-in there).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_KEYS, SECRET_FILE_KEYS, loadConfig } from '../../src/config/config.js';

const root = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');
type Healthcheck = { test?: string[] | string; start_period?: string };
type Service = {
  image?: string;
  build?: unknown;
  command?: unknown;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  networks?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: Healthcheck;
  secrets?: string[];
  stop_grace_period?: string;
  pull_policy?: string;
  ipv4_address?: unknown;
};
type Compose = {
  services: Record<string, Service>;
  networks: Record<string, { internal?: boolean; ipam?: { config?: { subnet?: string; ip_range?: string }[] } } | null>;
  secrets: Record<string, { file: string }>;
};
const composeText = read('compose.yaml');
const compose = parse(composeText) as Compose;
const override = parse(read('deploy/podman/compose.override.yaml')) as { services: Record<string, Service> };
const services = compose.services;
const wikiedge = services['wikiedge']!;
const env = wikiedge.environment ?? {};
const defaults = loadConfig({ WIKIEDGE_UPSTREAM: 'http://wiki' });

const ipv4 = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
function inCidr(ip: string, cidr: string): boolean {
  const [net, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(net) / size);
}
const cidrInside = (inner: string, outer: string) => inCidr(inner.split('/')[0]!, outer) && Number(inner.split('/')[1]) >= Number(outer.split('/')[1]);
const networksOf = (s: string) => services[s]!.networks ?? [];
const share = (a: string, b: string) => networksOf(a).some((n) => networksOf(b).includes(n));
const wikiIpam = compose.networks['wiki']?.ipam?.config?.[0] ?? {};

describe('compose stack: services', () => {
  it('has the wiki, the gateway, Redis, Prometheus and Grafana; the gateway is built here', () => {
    expect(Object.keys(services).sort()).toEqual(['grafana', 'mediawiki', 'prometheus', 'redis', 'wikiedge']);
    expect(wikiedge.build).toBe('.');
  });

  it('sets only configuration keys the gateway knows (or the _FILE form of a secret)', () => {
    for (const key of Object.keys(env)) expect([...CONFIG_KEYS, ...SECRET_FILE_KEYS], `${key} is not a configuration key`).toContain(key);
  });

  it('wires the gateway to Redis by service name, on a network they share and nothing else is on', () => {
    const url = new URL(env['WIKIEDGE_REDIS_URL'] ?? '');
    expect(url.protocol).toBe('redis:');
    expect(Object.keys(services)).toContain(url.hostname);
    expect(share('wikiedge', url.hostname)).toBe(true);
    expect(services[url.hostname]!.ports ?? []).toEqual([]);
    for (const net of networksOf(url.hostname)) {
      const members = Object.keys(services)
        .filter((s) => networksOf(s).includes(net))
        .sort();
      expect(members).toEqual(['redis', 'wikiedge']);
      expect(compose.networks[net]?.internal).toBe(true);
    }
    // With Redis the identity secret is required (config/load.ts): compose gives it as a file.
    expect(env['WIKIEDGE_IDENTITY_SECRET_FILE']).toMatch(/^\/run\/secrets\//);
    expect(
      loadConfig({ WIKIEDGE_UPSTREAM: 'http://wiki', WIKIEDGE_REDIS_URL: env['WIKIEDGE_REDIS_URL'], WIKIEDGE_IDENTITY_SECRET: 'a-secret-as-the-file-holds' })
        .redisUrl,
    ).toBe(env['WIKIEDGE_REDIS_URL']);
  });

  it('reaches the wiki by service name', () => {
    const upstream = new URL(env['WIKIEDGE_UPSTREAM'] ?? '');
    expect(upstream.hostname).toBe('mediawiki');
    expect(share('wikiedge', 'mediawiki')).toBe(true);
  });

  it('waits for healthy dependencies, and every dependency has a health check', () => {
    const dockerfileHasHealthcheck = /^HEALTHCHECK /m.test(read('Dockerfile'));
    let edges = 0;
    for (const [name, s] of Object.entries(services)) {
      const deps = s.depends_on ?? {};
      expect(Array.isArray(deps), `${name}: depends_on must be a mapping with conditions`).toBe(false);
      for (const [dep, cond] of Object.entries(deps)) {
        edges++;
        expect(cond.condition, `${name} -> ${dep}`).toBe('service_healthy');
        const own = services[dep]!.healthcheck?.test;
        expect(own !== undefined || (dep === 'wikiedge' && dockerfileHasHealthcheck), `${dep} has no health check`).toBe(true);
      }
    }
    expect(edges).toBeGreaterThanOrEqual(4);
    for (const s of ['mediawiki', 'redis', 'prometheus']) {
      const test = services[s]!.healthcheck?.test;
      expect(Array.isArray(test) && test[0] === 'CMD', `${s}: exec-form health check`).toBe(true);
    }
  });

  it('pins every pulled image to an explicit version tag', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build) continue;
      expect(s.image, name).toMatch(/^[\w./-]+:v?\d+\.\d+\.\d+[\w.-]*(@sha256:[0-9a-f]{64})?$/);
    }
    expect(composeText).toMatch(/digest/i);
  });

  it('gives the gateway time to drain before SIGKILL', () => {
    expect(Number.parseInt(wikiedge.stop_grace_period ?? '0', 10)).toBeGreaterThan((defaults.shutdownDrainMs + defaults.shutdownGraceMs) / 1000);
  });
});

describe('compose stack: networks and addresses', () => {
  it('uses names, never fixed container addresses (podman-compose rejects ipv4_address)', () => {
    expect(composeText).not.toMatch(/ipv4_address|ipv6_address/);
  });

  it('hands containers addresses from an ip_range inside the wiki subnet that leaves out its gateway address', () => {
    const { subnet, ip_range: range } = wikiIpam;
    expect(subnet).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    expect(range).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    expect(cidrInside(range!, subnet!)).toBe(true);
    const firstHost = subnet!.replace(/\.\d+\/\d+$/, (m) => `.${Number(m.slice(1).split('/')[0]) + 1}`);
    expect(inCidr(firstHost, range!), `${firstHost} (the network's gateway) must be outside ${range}`).toBe(false);
  });

  it('allows PURGE from that range and MediaWiki trusts X-Forwarded-For from it', () => {
    expect(env['WIKIEDGE_PURGE_ALLOW']).toBe(wikiIpam.ip_range);
    expect(services['mediawiki']!.environment?.['MW_TRUSTED_PROXY_CIDR']).toBe(wikiIpam.ip_range);
    const settings = read('deploy/mediawiki/LocalSettings.php');
    expect(settings).toContain(`getenv( 'MW_TRUSTED_PROXY_CIDR' ) ?: '${wikiIpam.ip_range}'`);
    // MediaWiki sends its PURGEs through the gateway's public port, by service name.
    expect(settings).toMatch(new RegExp(`^\\$wgCdnServers = \\[ 'wikiedge:${defaults.port}' \\];`, 'm'));
  });

  it('keeps the admin listener and Prometheus on a network of their own, which the wiki is not on', () => {
    expect(networksOf('mediawiki')).toEqual(['wiki']);
    expect(networksOf('prometheus')).toEqual(['admin']);
    expect(networksOf('grafana')).toEqual(['admin']);
    expect(networksOf('wikiedge').sort()).toEqual(['admin', 'cache', 'wiki']);
    expect(share('prometheus', 'mediawiki')).toBe(false);
  });

  it('publishes the public port, and the admin port on loopback only', () => {
    const ports = wikiedge.ports ?? [];
    expect(ports.some((p) => p.endsWith(`:${defaults.port}`))).toBe(true);
    const admin = ports.filter((p) => p.endsWith(`:${defaults.adminPort}`));
    expect(admin.length).toBe(1);
    for (const p of admin) expect(p).toMatch(/^127\.0\.0\.1:/);
    for (const s of ['prometheus', 'grafana']) for (const p of services[s]!.ports ?? []) expect(p).toMatch(/^127\.0\.0\.1:/);
    expect(services['mediawiki']!.ports ?? []).toEqual([]);
    expect(read('Dockerfile')).toMatch(new RegExp(`EXPOSE ${defaults.port} ${defaults.adminPort}`));
  });

  it('gives the gateway its secrets as files under /run/secrets', () => {
    for (const [key, value] of Object.entries(env).filter(([k]) => k.endsWith('_FILE'))) {
      const name = /^\/run\/secrets\/(\w+)$/.exec(value)?.[1];
      expect(name, key).toBeDefined();
      expect(wikiedge.secrets ?? [], key).toContain(name);
      expect(compose.secrets[name!], key).toBeDefined();
    }
    expect(read('.gitignore')).toMatch(/^\/secrets\/$/m);
    expect(read('.dockerignore')).toMatch(/^secrets\/$/m);
  });
});

describe('compose stack: Prometheus and Grafana provisioning', () => {
  it('lets Prometheus scrape the admin listener over the network they share', () => {
    const prom = parse(read('config/prometheus/prometheus.yml')) as {
      scrape_configs: { job_name: string; metrics_path: string; static_configs: { targets: string[] }[] }[];
    };
    const job = prom.scrape_configs.find((j) => j.job_name === 'wikiedge')!;
    expect(job.metrics_path).toBe('/metrics');
    expect(job.static_configs[0]!.targets).toContain(`wikiedge:${defaults.adminPort}`);
    expect(services['prometheus']!.volumes).toContain('./config/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(share('prometheus', 'wikiedge')).toBe(true);
  });

  const grafanaVolumes = services['grafana']!.volumes ?? [];
  const mountOf = (hostPath: string) => grafanaVolumes.find((v) => v.startsWith(`${hostPath}:`))?.split(':')[1];

  it('mounts the provisioning folder where Grafana reads it, with datasources/ and dashboards/ in it', () => {
    expect(mountOf('./config/grafana/provisioning')).toBe('/etc/grafana/provisioning');
    expect(readdirSync(path.join(root, 'config/grafana/provisioning/datasources')).some((f) => f.endsWith('.yaml'))).toBe(true);
    expect(readdirSync(path.join(root, 'config/grafana/provisioning/dashboards')).some((f) => f.endsWith('.yaml'))).toBe(true);
  });

  const datasources = (
    parse(read('config/grafana/provisioning/datasources/prometheus.yaml')) as {
      datasources: { uid: string; type: string; url: string; isDefault?: boolean }[];
    }
  ).datasources;

  it('points the datasource at the Prometheus service, on a network Grafana is on', () => {
    const ds = datasources.find((d) => d.type === 'prometheus')!;
    const url = new URL(ds.url);
    expect(url.hostname).toBe('prometheus');
    expect(url.port).toBe('9090');
    expect(share('grafana', 'prometheus')).toBe(true);
  });

  it('mounts the dashboards where the dashboard provider looks for them', () => {
    const provider = parse(read('config/grafana/provisioning/dashboards/wikiedge.yaml')) as {
      providers: { type: string; options: { path: string } }[];
    };
    expect(provider.providers[0]!.type).toBe('file');
    const dashboardsPath = provider.providers[0]!.options.path;
    expect(mountOf('./config/grafana/dashboards')).toBe(dashboardsPath);
    expect(readdirSync(path.join(root, 'config/grafana/dashboards')).some((f) => f.endsWith('.json'))).toBe(true);
  });

  it('has dashboards that parse and use only provisioned datasource uids', () => {
    const uids = new Set(datasources.map((d) => d.uid));
    const files = readdirSync(path.join(root, 'config/grafana/dashboards')).filter((f) => f.endsWith('.json'));
    for (const f of files) {
      const dashboard = JSON.parse(read(`config/grafana/dashboards/${f}`)) as {
        templating?: { list?: { name: string; type: string; query?: string; current?: { value?: string } }[] };
      };
      const vars = new Map((dashboard.templating?.list ?? []).filter((v) => v.type === 'datasource').map((v) => [v.name, v]));
      const refs = new Set<string>();
      const walk = (x: unknown): void => {
        if (Array.isArray(x)) x.forEach(walk);
        else if (x && typeof x === 'object') {
          const o = x as Record<string, unknown>;
          const ds = o['datasource'];
          if (ds && typeof ds === 'object' && typeof (ds as { uid?: unknown }).uid === 'string') refs.add((ds as { uid: string }).uid);
          Object.values(o).forEach(walk);
        }
      };
      walk(dashboard);
      expect(refs.size, f).toBeGreaterThan(0);
      for (const uid of refs) {
        if (uid === '-- Grafana --') continue; // Grafana's built-in annotations source
        const variable = /^\$\{(\w+)\}$/.exec(uid)?.[1];
        if (variable) {
          const v = vars.get(variable);
          expect(v, `${f}: datasource variable ${variable} is not defined`).toBeDefined();
          expect(v!.query, `${f}: ${variable}`).toBe('prometheus');
          expect(uids, `${f}: ${variable} defaults to ${v!.current?.value}`).toContain(v!.current?.value);
        } else {
          expect(uids, `${f}: datasource uid ${uid}`).toContain(uid);
        }
      }
    }
  });
});

describe('compose stack: the wiki and the podman override', () => {
  const settings = read('deploy/mediawiki/LocalSettings.php');

  it('keeps the debug toolbar off in the LocalSettings.php that compose uses, and says why', () => {
    expect(settings).toMatch(/^\$wgDebugToolbar = false;$/m);
    expect(settings).not.toMatch(/^\$wgDebugToolbar = true;/m);
    expect(settings).toMatch(/MUST STAY OFF IN PRODUCTION/);
    expect(settings).toMatch(/Cookie header/);
    expect(read('docs/DOCKER.md')).toMatch(/\$wgDebugToolbar/);
  });

  it('mounts the files the wiki needs, and its start script creates the database it is configured for', () => {
    const mw = services['mediawiki']!;
    expect(mw.volumes).toContain('./deploy/mediawiki/LocalSettings.php:/var/www/html/LocalSettings.php:ro');
    expect(mw.volumes).toContain('./deploy/mediawiki/start.sh:/usr/local/bin/wikiedge-mediawiki-start:ro');
    const start = read('deploy/mediawiki/start.sh');
    const dbname = /^\$wgDBname = '(\w+)';/m.exec(settings)?.[1];
    const dataDir = /^\$wgSQLiteDataDir = '([^']+)';/m.exec(settings)?.[1];
    expect(start).toContain(`--dbname ${dbname}`);
    expect(start).toContain(`DATA=${dataDir}`);
    expect(mw.volumes!.some((v) => v.endsWith(`:${dataDir}`))).toBe(true);
    expect(mw.secrets).toContain('mediawiki_admin_password');
    expect(start).toContain('/run/secrets/mediawiki_admin_password');
  });

  it('the override only swaps images, for services that exist, with a stand-in Containerfile each', () => {
    for (const [name, s] of Object.entries(override.services)) {
      expect(Object.keys(services), name).toContain(name);
      for (const key of Object.keys(s)) expect(['image', 'pull_policy'], `${name}.${key}`).toContain(key);
      expect(s.pull_policy).toBe('never');
      if (s.image) {
        expect(s.image, name).toMatch(/^localhost\/wikiedge-standin\//);
        expect(existsSync(path.join(root, `deploy/podman/standins/${name}/Containerfile`)), name).toBe(true);
      }
    }
    // Every pulled image has a stand-in, except Grafana (no Debian package).
    const pulled = Object.entries(services)
      .filter(([, s]) => !s.build)
      .map(([n]) => n);
    expect(pulled.filter((n) => !override.services[n]?.image).sort()).toEqual(['grafana']);
  });
});

describe('compose stack: docs', () => {
  it('is described in the README: the files and ports it names exist', () => {
    const readme = read('README.md');
    expect(readme).toContain('compose.yaml');
    expect(readme).toContain('deploy/mediawiki/LocalSettings.php');
    expect(readme).toContain('scripts/verify-image.sh');
    for (const port of ['8080', '8081', '9090', '3000']) expect(readme).toContain(port);
  });
});

describe('compose stack: the gateway hardened (Operations, round 2)', () => {
  const hardened = wikiedge as Service & {
    read_only?: boolean;
    cap_drop?: string[];
    security_opt?: string[];
    mem_limit?: string;
    cpus?: number | string;
  };

  it('runs read-only, without capabilities or new privileges, within memory and CPU limits', () => {
    expect(hardened.read_only).toBe(true);
    expect(hardened.cap_drop).toEqual(['ALL']);
    expect(hardened.security_opt).toContain('no-new-privileges:true');
    // At least the default budgets (shared + session) and ~200 MB of the process beside them.
    const mib = Number(/^(\d+)m$/.exec(hardened.mem_limit ?? '')?.[1]);
    expect(mib * 2 ** 20).toBeGreaterThanOrEqual(defaults.cacheSharedMaxBytes + defaults.cacheSessionMaxBytes + 200 * 2 ** 20);
    expect(Number(hardened.cpus)).toBeGreaterThanOrEqual(1);
  });

  it('takes the admin token and the metrics token from secret files, and Prometheus the metrics one', () => {
    expect(env['WIKIEDGE_ADMIN_TOKEN_FILE']).toBe('/run/secrets/wikiedge_admin_token');
    expect(env['WIKIEDGE_METRICS_TOKEN_FILE']).toBe('/run/secrets/wikiedge_metrics_token');
    expect(services['prometheus']!.secrets).toEqual(['wikiedge_metrics_token']);
    expect(read('config/prometheus/prometheus.yml')).toMatch(
      /authorization:\s*\n\s*type: Bearer\s*\n\s*credentials_file: \/run\/secrets\/wikiedge_metrics_token/,
    );
    expect(read('Dockerfile')).toMatch(/WIKIEDGE_ADMIN_TOKEN_FILE=\/run\/secrets\/wikiedge_admin_token/);
  });
});
