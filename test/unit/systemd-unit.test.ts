// deploy/systemd/wikiedge.service: valid for systemd (`systemd-analyze verify`, skipped saying why
// when it is missing), and wired as docs/OPERATIONS.md "Under systemd" says: the production command (node,
// not npm), --check before start and reload, SIGHUP to reload, SIGTERM to drain within a stop
// timeout above drain + grace, and the access log where logrotate (deploy/logrotate/wikiedge)
// moves it and signals SIGUSR1.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { scratchDir } from '../support/scratch.js';

const root = path.resolve(import.meta.dirname, '../..');
const UNIT = path.join(root, 'deploy/systemd/wikiedge.service');
const text = readFileSync(UNIT, 'utf8');
const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
const analyze = probe.status === 0;

/** The unit's settings, by section: each key's values in order (a key may repeat). */
function parseUnit(unit: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | undefined;
  for (const raw of unit.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = sections[section[1]!] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    if (!current || eq === -1) throw new Error(`not a unit line: ${line}`);
    (current[line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
  }
  return sections;
}

const unit = parseUnit(text);
const service = unit['Service']!;
const defaults = loadConfig({ WIKIEDGE_UPSTREAM: 'http://wiki' });

describe('deploy/systemd/wikiedge.service', () => {
  it('passes systemd-analyze verify', (ctx) => {
    if (!analyze) return ctx.skip('systemd-analyze is not on the PATH (Debian: apt-get install systemd)');
    // verify checks that ExecStart's program exists: where node is not /usr/bin/node, this one's.
    const dir = scratchDir('wikiedge-unit-');
    const copy = path.join(dir, 'wikiedge.service');
    writeFileSync(copy, existsSync('/usr/bin/node') ? text : text.replaceAll('/usr/bin/node', process.execPath));
    const r = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8', timeout: 30_000 });
    const output = `${r.stdout}${r.stderr}`;
    expect(r.status, output).toBe(0);
    // Warnings (an unknown key, a bad value) are printed and still exit 0: none may be.
    expect(output.split('\n').filter((l) => l.includes('wikiedge.service'))).toEqual([]);
  });

  it('runs the production command, node and not npm, with the allocator setting', () => {
    expect(service['ExecStart']).toEqual(['/usr/bin/node /opt/wikiedge/dist/main.js']);
    expect(service['ExecStartPre']).toEqual(['/usr/bin/node /opt/wikiedge/dist/main.js --check']);
    expect(service['Environment']).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    expect(text).not.toMatch(/^Exec\w*=.*\bnpm\b/m);
  });

  it('wires reload (check, then SIGHUP) and drain (SIGTERM, a stop timeout above drain + grace)', () => {
    expect(service['ExecReload']).toEqual(['/usr/bin/node /opt/wikiedge/dist/main.js --check', '/bin/kill -HUP $MAINPID']);
    expect(service['KillSignal']).toEqual(['SIGTERM']);
    const stopSeconds = Number(service['TimeoutStopSec']![0]);
    // + 5 s: a cluster primary's wait for its workers (docs/OPERATIONS.md, "Under systemd").
    expect(stopSeconds * 1000).toBeGreaterThan(defaults.shutdownDrainMs + defaults.shutdownGraceMs + 5_000);
    expect(service['RestartPreventExitStatus']).toEqual(['2']);
  });

  it('writes the access log where logrotate moves it, and logrotate signals SIGUSR1', () => {
    expect(service['Environment']).toContain('WIKIEDGE_ACCESS_LOG_FILE=/var/log/wikiedge/access.log');
    expect(service['ReadWritePaths']).toEqual(['/var/log/wikiedge']);
    const logrotate = readFileSync(path.join(root, 'deploy/logrotate/wikiedge'), 'utf8');
    expect(logrotate).toMatch(/^\/var\/log\/wikiedge\/access\.log \{/m);
    expect(logrotate).toContain('systemctl kill -s USR1 wikiedge.service');
    expect(logrotate).not.toMatch(/^\s*copytruncate/m);
  });

  it('takes the admin token from a file, and a memory limit above the default budgets', () => {
    expect(service['Environment']).toContain('WIKIEDGE_ADMIN_TOKEN_FILE=/etc/wikiedge/admin-token');
    const mib = Number(/^(\d+)M$/.exec(service['MemoryMax']![0]!)?.[1]);
    expect(mib * 2 ** 20).toBeGreaterThan(defaults.cacheSharedMaxBytes + defaults.cacheSessionMaxBytes + 200 * 2 ** 20);
    expect(service['NoNewPrivileges']).toEqual(['yes']);
  });
});
