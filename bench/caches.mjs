// The C caches the gateway is measured beside, as the benches start them: nginx proxy_cache and
// Varnish, each on loopback on free ports, pinned to a CPU (taskset; `cpu: null`: unpinned), in
// front of a stand-in wiki on 127.0.0.1:`upstreamPort`. Each resolves once a request to `probe`
// through it is answered.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, have, startProcess, waitFor } from './harness.mjs';

/**
 * nginx, one worker, proxy_cache in `dir` (on disk, as deployed), keep-alive connections to the
 * wiki. It honours the wiki's Cache-Control (`private` answers are passed, not stored) and Vary.
 */
export async function startNginx({ upstreamPort, dir, probe, cpu = 0 }) {
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? 'user root;' : ''} worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/nginx-error.log;
events { worker_connections 1024; }
http { access_log off; proxy_cache_path ${dir}/nginx-cache keys_zone=api:10m;
  upstream wiki { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server { listen 127.0.0.1:${port};
    location / { proxy_pass http://wiki; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_cache api; proxy_cache_valid 200 1m; add_header X-Cache $upstream_cache_status; } } }`,
  );
  const child = startProcess('nginx', 'nginx', ['-c', conf, '-p', dir], { cpu: cpu ?? undefined });
  await waitFor(`http://127.0.0.1:${port}${probe}`);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, child };
}

/**
 * varnishd in the foreground (its manager and its child), `vcl` after the backend declaration
 * (empty: Varnish's builtin VCL alone, which passes requests with a Cookie or Authorization and
 * does not store `private` answers), storage `storage`, its working folder `dir`.
 */
export async function startVarnish({ upstreamPort, dir, probe, vcl = '', storage = 'malloc,64m', cpu = 0 }) {
  const port = await freePort();
  const admin = await freePort();
  mkdirSync(path.dirname(dir), { recursive: true });
  const file = `${dir}.vcl`;
  writeFileSync(file, `vcl 4.1;\nbackend wiki { .host = "127.0.0.1"; .port = "${upstreamPort}"; }\n${vcl}`);
  const child = startProcess(
    'varnish',
    'varnishd',
    [...(process.getuid?.() === 0 ? ['-j', 'none'] : []), '-F', '-a', `127.0.0.1:${port}`, '-T', `127.0.0.1:${admin}`, '-f', file, '-s', storage, '-n', dir],
    { cpu: cpu ?? undefined },
  );
  await waitFor(`http://127.0.0.1:${port}${probe}`, 200);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, child };
}

const PACKAGES = { nginx: 'nginx-light', varnishd: 'varnish', wrk: 'wrk' };

/**
 * Installs what is missing of nginx, Varnish and wrk with apt-get (as root, non-interactive;
 * `RUNLEVEL=1` keeps Debian's maintainer scripts from starting the packages' own services), or
 * says it skips them. Returns the commands now at hand.
 */
export function ensureCaches(cmds = Object.keys(PACKAGES)) {
  const missing = cmds.filter((c) => !have(c));
  if (missing.length > 0 && process.getuid?.() === 0 && have('apt-get')) {
    const pkgs = missing.map((c) => PACKAGES[c]);
    console.log(`  (installing ${pkgs.join(' ')} with apt-get)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' };
    const install = () => execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    try {
      install();
    } catch {
      try {
        execFileSync('apt-get', ['update'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
        install();
      } catch {
        /* said below */
      }
    }
  }
  const at = cmds.filter((c) => have(c));
  for (const c of cmds.filter((c) => !at.includes(c))) console.log(`  (${c} not installed and not installable here: skipped; apt-get install ${PACKAGES[c]})`);
  return new Set(at);
}
