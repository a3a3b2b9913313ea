// The compression section of the benchmarks (src/compression): `BENCH_ONLY=compression npm run
// bench`, or alone: `node bench/compression.mjs` (after `npm run build`). Not in run.mjs's default
// set. It needs a throw-away wiki (harness.mjs withWiki), into which it writes 25 pages made of
// MediaWiki's own release notes (wikitext: headings, lists, links) with maintenance/edit.php.
//
//   corpus   real api.php answers of that wiki: siteinfo by siprop in json, formatversion=2, xml,
//            JSONP and jsonfm; paraminfo of every module; help of every action; parse and
//            revisions of the 25 pages in json, formatversion=2, xml and jsonfm; allmessages
//   levels   gzip levels and br qualities over the corpus: size and CPU per KB (the choices in
//            src/http/codings.ts)
//   memory   entries of the corpus one 100 MB shared budget holds, stored as they are (before)
//            and in their stored form (after), with RSS growth, each in a process of its own
//   wire     bytes on the wire per hit for a real siteinfo and a real parse answer: the wiki
//            direct, wikiedge (identity, gzip, br), nginx `gzip on` and Varnish `do_gzip` in
//            front of the same wiki (when installed)
//   hits     hit throughput with `Accept-Encoding: gzip, br` and `gzip` against identity hits of
//            the same entries (wrk; BENCH_COMPRESSION_ROUNDS rounds, fresh processes each)
//
// BENCH_COMPRESSION_PARTS=levels,memory,wire,hits chooses parts (the corpus is built when any
// needs it).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { request } from 'undici';
import { fmt, freePort, gateway, have, parseWrk, root, SECONDS, startProcess, stopProcess, waitFor, work } from './harness.mjs';

const RELEASE_NOTES = '/usr/share/doc/mediawiki/RELEASE-NOTES-1.39.gz';
const MW = '/usr/share/mediawiki';
const PARTS = new Set((process.env.BENCH_COMPRESSION_PARTS ?? 'levels,memory,wire,hits').split(','));
const ROUNDS = Number(process.env.BENCH_COMPRESSION_ROUNDS ?? 3);
const MB = 1024 * 1024;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** nginx and varnishd live in /usr/sbin, which a user's PATH may not hold. */
const sbin = (cmd) => (have(cmd) ? cmd : have(`/usr/sbin/${cmd}`) ? `/usr/sbin/${cmd}` : undefined);

// ------------------------------------------------------------------------------------ corpus

/** The release notes' level-2 sections as pages (and the whole file as one long page). */
function seedPages(data) {
  const text = gunzipSync(readFileSync(RELEASE_NOTES)).toString('utf8');
  const sections = text.split(/\n(?===[^=])/).filter((s) => s.length >= 150);
  const pages = [...sections.map((s, i) => [`Bench/Release notes ${i + 1}`, s]), ['Bench/Release notes', text]];
  for (const [title, content] of pages) {
    execFileSync('php', [`${MW}/maintenance/edit.php`, '--conf', path.join(data, 'LocalSettings.php'), '-u', 'Admin', '-s', 'bench', title], {
      input: content,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  }
  return pages.map(([title]) => title.replaceAll(' ', '_'));
}

const SIPROPS = [
  'general',
  'namespaces',
  'namespacealiases',
  'specialpagealiases',
  'magicwords',
  'interwikimap',
  'statistics',
  'usergroups',
  'libraries',
  'extensions',
  'fileextensions',
  'rightsinfo',
  'restrictions',
  'languages',
  'languagevariants',
  'skins',
  'extensiontags',
  'functionhooks',
  'showhooks',
  'variables',
  'protocols',
  'defaultoptions',
  'uploaddialog',
];
const AM_PREFIXES = [
  'action-',
  'apihelp-query',
  'apihelp-edit',
  'right-',
  'group-',
  'tooltip-',
  'prefs-',
  'special',
  'log',
  'api-error',
  'htmlform',
  'upload',
  'watch',
  'block',
  'edit',
  'search',
  'history',
  'page',
  'user',
  'talk',
  'recentchanges',
  'category',
  'file',
  'import',
  'export',
];

/** Real answers of the wiki, asked directly (identity), with the headers it sent. */
async function buildCorpus(wikiUrl, data) {
  const api = `${wikiUrl}/w/api.php`;
  const titles = seedPages(data);
  const fetchOne = async (q) => {
    const res = await request(`${api}?${q}`);
    return { q, status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
  };
  const info = JSON.parse((await fetchOne('action=paraminfo&modules=main|query&format=json&formatversion=2')).body);
  const param = (module, name) => info.paraminfo.modules.find((m) => m.name === module).parameters.find((p) => p.name === name).type;
  const actions = param('main', 'action');
  const submodules = ['list', 'prop', 'meta'].flatMap((g) => param('query', g));
  const qs = [];
  for (const a of actions) qs.push(`action=paraminfo&modules=${a}&format=json`, `action=help&modules=${a}`);
  for (const s of submodules) qs.push(`action=paraminfo&modules=query%2B${s}&format=json&formatversion=2`);
  for (const s of SIPROPS)
    for (const f of ['format=json', 'format=json&formatversion=2', 'format=xml', 'format=json&callback=cb', 'format=jsonfm'])
      qs.push(`action=query&meta=siteinfo&siprop=${s}&${f}`);
  for (const t of titles)
    for (const f of ['format=json', 'format=json&formatversion=2', 'format=xml', 'format=jsonfm']) {
      qs.push(`action=parse&page=${encodeURIComponent(t)}&${f}`);
      qs.push(`action=query&prop=revisions&titles=${encodeURIComponent(t)}&rvprop=content|timestamp|user|comment&rvslots=main&${f}`);
    }
  for (const p of AM_PREFIXES) qs.push(`action=query&meta=allmessages&amprefix=${p}&format=json`);
  const out = [];
  for (let i = 0; i < qs.length; i += 4) out.push(...(await Promise.all(qs.slice(i, i + 4).map(fetchOne))));
  return { answers: out.filter((a) => a.status === 200 && a.body.length > 0), titles };
}

// ------------------------------------------------------------------------------------ levels

function benchLevels(row, answers) {
  const bodies = answers.map((a) => a.body).filter((b) => b.length >= 1024);
  const total = bodies.reduce((n, b) => n + b.length, 0);
  console.log(
    `\n## Compression levels: ${bodies.length} real answers from 1 KiB up (of ${answers.length}), ${fmt(total / bodies.length / 1024, 1)} KB on average`,
  );
  const br = (q) => (b) =>
    brotliCompressSync(b, {
      params: { [constants.BROTLI_PARAM_QUALITY]: q, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: b.length },
    });
  const candidates = [
    ...[1, 4, 5, 6, 9].map((l) => [`gzip level ${l}`, (b) => gzipSync(b, { level: l }), 3]),
    ...[4, 5, 6].map((q) => [`br quality ${q}`, br(q), 3]),
    ...[10, 11].map((q) => [`br quality ${q}`, br(q), 1]),
  ];
  const sizes = {};
  for (const [name, fn, reps] of candidates) {
    for (const b of bodies.slice(0, 30)) fn(b); // warm
    let bytes = 0;
    const t0 = process.cpuUsage();
    for (let r = 0; r < reps; r++) {
      bytes = 0;
      for (const b of bodies) bytes += fn(b).length;
    }
    const cpu = process.cpuUsage(t0);
    const us = (cpu.user + cpu.system) / reps;
    sizes[name] = bytes;
    row(
      'compression',
      `${name}: × smaller / µs of CPU per KB`,
      `${fmt(total / bytes)} / ${fmt(us / (total / 1024), 1)}`,
      `${fmt(us / bodies.length, 0)} µs per answer`,
    );
  }
  const gz = bodies.map((b) => gzipSync(b, { level: 6 }));
  const t0 = process.cpuUsage();
  for (const g of gz) gunzipSync(g);
  const cpu = process.cpuUsage(t0);
  row('compression', 'gunzip (identity for a client without Accept-Encoding): µs per KB', fmt((cpu.user + cpu.system) / (total / 1024), 1));
  row(
    'compression',
    'br 5 ÷ gzip 6 bytes; br 11 ÷ gzip 6',
    `${fmt(sizes['br quality 5'] / sizes['gzip level 6'])}; ${fmt(sizes['br quality 11'] / sizes['gzip level 6'])}`,
  );
}

// ------------------------------------------------------------------------------------ memory

/** Headers as the gateway stores them (http/forwarding.ts, policy.ts responseHeaders): no hop-by-hop, no Date. */
function storedHeaders(h) {
  const out = {};
  for (const [k, v] of Object.entries(h))
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'x-request-id', 'host'].includes(k)) out[k] = v;
  return out;
}

async function benchMemory(row, answers) {
  console.log(
    '\n## Memory: entries of real api.php answers one 100 MB shared budget holds (a process of its own each, forced GC, MALLOC_MMAP_THRESHOLD_ as deployed)',
  );
  const file = path.join(work, 'corpus.json');
  writeFileSync(file, JSON.stringify(answers.map((a) => ({ q: a.q, headers: storedHeaders(a.headers), body: a.body.toString('base64') }))));
  const run = (mode) =>
    JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', path.join(root, 'bench/compression-memory.mjs'), mode, file, '100'], {
        encoding: 'utf8',
        env: { ...process.env, MALLOC_MMAP_THRESHOLD_: '131072' },
      }),
    );
  const before = run('identity');
  const after = run('stored');
  for (const [name, r] of [
    ['as they are (before)', before],
    ['in their stored form (after)', after],
  ])
    row(
      'compression',
      `100 MB budget, answers ${name}: entries held / RSS growth MB`,
      `${r.entries} / ${fmt(r.rssMB, 1)}`,
      `bodies ${fmt(r.bodyMB, 1)} MB holding ${fmt(r.identityMB, 1)} MB of answers; stored form made in ${fmt((r.storeSeconds * 1e6) / r.corpus, 0)} µs per answer`,
    );
  row('compression', 'entries per 100 MB, after ÷ before', fmt(after.entries / before.entries), 'goal ≥ 3×');
  for (const label of ['under 1 KiB', '1-4 KiB', '4-16 KiB', '16 KiB and up']) {
    const b = before.bySize[label];
    const a = after.bySize[label];
    if (b && a)
      row(
        'compression',
        `  answers ${label} (${b.n} of the corpus): bytes per entry before / after`,
        `${fmt(b.perEntry, 0)} / ${fmt(a.perEntry, 0)}`,
        `${fmt(b.perEntry / a.perEntry)}× as many per budget`,
      );
  }
}

// -------------------------------------------------------------------------------------- wire

/** One request on its own connection; the bytes that came back (status line, headers, body). */
function rawBytes(base, target, headers = {}) {
  const { hostname, port } = new URL(base);
  const lines = [`GET ${target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return new Promise((resolve, reject) => {
    const chunks = [];
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1');
      resolve({ total: all.length, body: all.length - split - 4, coding: /\r\ncontent-encoding: *(\S+)/i.exec(head)?.[1] ?? 'identity', head });
    });
  });
}

async function frontWithNginx(wikiPort) {
  const nginx = sbin('nginx');
  if (!nginx) return undefined;
  const port = await freePort();
  const dir = path.join(work, 'nginx-gzip');
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  // gzip_comp_level 6 as MediaWiki's own OutputHandler uses (nginx's default is 1).
  writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? 'user root;' : ''} worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 256; }
http { access_log off; gzip on; gzip_comp_level 6; gzip_proxied any; gzip_min_length 1024;
  gzip_types application/json text/xml text/javascript text/html application/xml;
  server { listen 127.0.0.1:${port}; location / { proxy_pass http://127.0.0.1:${wikiPort}; proxy_http_version 1.1; } } }`,
  );
  const child = startProcess('nginx-gzip', nginx, ['-c', conf, '-p', dir]);
  await waitFor(`http://127.0.0.1:${port}/w/api.php`);
  return { url: `http://127.0.0.1:${port}`, child };
}

async function frontWithVarnish(wikiPort) {
  const varnishd = sbin('varnishd');
  if (!varnishd) return undefined;
  const port = await freePort();
  const admin = await freePort();
  const vcl = path.join(work, 'gzip.vcl');
  writeFileSync(
    vcl,
    `vcl 4.1;\nbackend wiki { .host = "127.0.0.1"; .port = "${wikiPort}"; }\nsub vcl_recv { return (hash); }\nsub vcl_backend_response { set beresp.ttl = 60s; set beresp.do_gzip = true; return (deliver); }\n`,
  );
  const child = startProcess('varnish-gzip', varnishd, [
    ...(process.getuid?.() === 0 ? ['-j', 'none'] : []),
    '-F',
    '-a',
    `127.0.0.1:${port}`,
    '-T',
    `127.0.0.1:${admin}`,
    '-f',
    vcl,
    '-s',
    'malloc,64m',
    '-n',
    path.join(work, 'varnish-gzip'),
  ]);
  await waitFor(`http://127.0.0.1:${port}/w/api.php`, 200);
  return { url: `http://127.0.0.1:${port}`, child };
}

async function benchWire(row, wikiUrl, titles) {
  console.log('\n## Bytes on the wire per hit (status line + headers + body), real answers');
  const gw = await gateway(wikiUrl, { WIKIEDGE_BROTLI_AFTER_HITS: '1' });
  const wikiPort = new URL(wikiUrl).port;
  const fronts = [
    ['nginx gzip on (level 6)', await frontWithNginx(wikiPort)],
    ['Varnish do_gzip', await frontWithVarnish(wikiPort)],
  ];
  const targets = [
    ['siteinfo (general, json)', '/w/api.php?action=query&meta=siteinfo&format=json'],
    ['parse of a page (json)', `/w/api.php?action=parse&page=${encodeURIComponent(titles[Math.floor(titles.length / 2)])}&format=json`],
    ['parse of the long page (json)', `/w/api.php?action=parse&page=${encodeURIComponent(titles[titles.length - 1])}&format=json`],
  ];
  const br = { 'Accept-Encoding': 'gzip, deflate, br' };
  for (const [name, target] of targets) {
    const direct = await rawBytes(wikiUrl, target, br);
    await rawBytes(gw.url, target); // the miss
    let viaBr = await rawBytes(gw.url, target, br);
    for (let i = 0; i < 50 && viaBr.coding !== 'br'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      viaBr = await rawBytes(gw.url, target, br);
    }
    const identity = await rawBytes(gw.url, target);
    const gzip = await rawBytes(gw.url, target, { 'Accept-Encoding': 'gzip, deflate' });
    const cells = [
      `wiki direct ${direct.total} (${direct.coding})`,
      `wikiedge identity ${identity.total}`,
      `gzip ${gzip.total}`,
      `br ${viaBr.total} (${viaBr.coding})`,
    ];
    for (const [label, front] of fronts) {
      if (!front) continue;
      await rawBytes(front.url, target, br);
      const hit = await rawBytes(front.url, target, br);
      cells.push(`${label} ${hit.total} (${hit.coding})`);
    }
    row('compression', `${name}: bytes per hit`, `${fmt(identity.total / viaBr.total)}× smaller`, cells.join(' · '));
  }
  for (const [, front] of fronts) if (front) await stopProcess(front.child);
  await stopProcess(gw.child);
  if (!fronts[0][1]) console.log('  (nginx not installed: skipped; apt-get install nginx-light)');
  if (!fronts[1][1]) console.log('  (varnish not installed: skipped; apt-get install varnish)');
}

// -------------------------------------------------------------------------------------- hits

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * wrk on CPU 1 with extra headers, after an unmeasured warm-up with the same requests; with the
 * server's CPU time per request, which a busy neighbour disturbs less than req/s.
 */
function wrkWith(url, headers, pid, seconds = SECONDS) {
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c50', '-d2s', ...h, url], { stdio: 'ignore' });
  const before = cpuSeconds(pid);
  const r = parseWrk(execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c50', `-d${seconds}s`, '--latency', ...h, url], { encoding: 'utf8' }));
  return { ...r, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / (r.rps * seconds) };
}

async function benchHits(row, answers) {
  if (!have('wrk')) {
    console.log('\n## Hits: wrk is not installed (apt-get install wrk): skipped');
    return;
  }
  const pick = (test) => answers.find((a) => test(a.q));
  const chosen = [
    [
      'siteinfo namespaces (json)',
      pick((q) => q === 'action=query&meta=siteinfo&siprop=namespaces&format=json'),
      '/w/api.php?action=query&meta=siteinfo&siprop=namespaces&format=json',
    ],
    [
      'parse of a page (json)',
      pick((q) => q.startsWith('action=parse') && q.endsWith('format=json') && !q.includes('formatversion')),
      '/w/api.php?action=parse&page=Bench&format=json',
    ],
  ];
  console.log(
    `\n## Hits of compressed entries: wrk -t1 -c50 on CPU 1, gateway on CPU 0, ${ROUNDS} rounds with a fresh gateway each, the three kinds of client interleaved; medians`,
  );
  for (const [name, a, target] of chosen) {
    if (!a) continue;
    const file = path.join(work, `answer-${name.replace(/\W+/g, '-')}.bin`);
    writeFileSync(file, a.body);
    const port = await freePort();
    const upstream = startProcess('answer-file', process.execPath, [path.join(root, 'bench/servers/answer-file.mjs'), String(port), file], { cpu: 1 });
    await waitFor(`http://127.0.0.1:${port}/`);
    const kinds = [
      ['identity (no Accept-Encoding)', {}],
      ['gzip', { 'Accept-Encoding': 'gzip, deflate' }],
      ['gzip, br', { 'Accept-Encoding': 'gzip, br' }],
    ];
    const results = new Map(kinds.map(([k]) => [k, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const gw = await gateway(`http://127.0.0.1:${port}`);
      const url = `${gw.url}${target}`;
      // Fill the entry, keep its decoded copy, make its br (4 br hits by default).
      await request(url).then((r) => r.body.dump());
      for (let i = 0; i < 8; i++) await request(url, { headers: { 'accept-encoding': 'gzip, br' } }).then((r) => r.body.dump());
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 0; i < kinds.length; i++) {
        const [kind, headers] = kinds[(i + round) % kinds.length];
        results.get(kind).push(wrkWith(url, headers, gw.child.pid));
      }
      await stopProcess(gw.child);
    }
    await stopProcess(upstream);
    const base = results.get('identity (no Accept-Encoding)');
    for (const [kind] of kinds) {
      const rs = results.get(kind);
      const ratios = rs.map((r, i) => r.rps / base[i].rps);
      const cpu = rs.map((r, i) => base[i].cpuUs / r.cpuUs);
      row(
        'compression',
        `${name} ${a.body.length} B, ${kind}: req/s`,
        fmt(median(rs.map((r) => r.rps)), 0),
        `× identity ${fmt(median(ratios))} (rounds ${ratios.map((x) => fmt(x)).join(' · ')})${kind === 'gzip, br' ? ', target ≥ 0.90' : ''}; CPU ${fmt(median(rs.map((r) => r.cpuUs)), 1)} µs per request (identity's ÷ this: ${fmt(median(cpu))})`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------- the section

/** The section, as run.mjs calls it: `row(section, what, value, note)` prints and records a line. */
export async function benchCompression(row, withWiki) {
  await withWiki(async (wikiUrl, data) => {
    console.log('\n## Compression: building the corpus (25 pages written into the throw-away wiki, then its answers)');
    const { answers, titles } = await buildCorpus(wikiUrl, data);
    row(
      'compression',
      'corpus: real api.php answers',
      answers.length,
      `${fmt(answers.reduce((n, a) => n + a.body.length, 0) / MB, 2)} MB; median ${median(answers.map((a) => a.body.length))} B`,
    );
    if (PARTS.has('levels')) benchLevels(row, answers);
    if (PARTS.has('memory')) await benchMemory(row, answers);
    if (PARTS.has('wire')) await benchWire(row, wikiUrl, titles);
    if (PARTS.has('hits')) await benchHits(row, answers);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { withWiki, ensureBuilt, stopAll } = await import('./harness.mjs');
  ensureBuilt();
  const rows = [];
  const row = (section, what, value, note = '') => {
    rows.push({ section, what, value, note });
    console.log(`  ${what.padEnd(58)} ${String(value).padStart(14)}  ${note}`);
  };
  await benchCompression(row, withWiki);
  writeFileSync(path.join(work, 'results.json'), JSON.stringify(rows, null, 2));
  console.log(`\nresults: ${path.join(work, 'results.json')}`);
  stopAll();
  process.exit(0);
}
