// A stand-in MediaWiki 1.39 for the soak (bench/soak.mjs): the real one under php -S answers a
// few hundred requests a second, too slow for a sustained mix. This one answers api.php with the
// cache headers MediaWiki sends for each module, requester and parameter (ApiMain::sendCacheHeaders,
// as recorded from MediaWiki 1.39, rows 01, 02, 05, 06, 12, 35, 36, 51, 55 of cache-policy-captures.test.ts),
// index.php as a private page (29b), after a think time, and closes one connection in ten
// (php -S closes every one; Apache keeps them alive) so the gateway's pool both reuses and reopens.
//
//   node fake-mediawiki.mjs PORT [thinkMs=5]
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 9103);
const thinkMs = Number(process.argv[3] ?? 5);

/** Modules whose cache mode is `public` (ApiQueryAllPages, ApiQuerySiteinfo, …); the rest are private. */
const PUBLIC_MODULES = new Set(['allpages', 'siteinfo', 'allmessages', 'info', 'revisions', 'categorymembers']);
const API_VARY = 'Accept-Encoding, Treat-as-Untrusted, Cookie';
const NOT_CACHEABLE = 'private, must-revalidate, max-age=0';
const EPOCH = 'Thu, 01 Jan 1970 00:00:01 GMT';

const general = {
  mainpage: 'Main Page',
  base: 'http://127.0.0.1/w/index.php/Main_Page',
  sitename: 'LabWiki',
  generator: 'MediaWiki 1.39.17',
  phpversion: '8.2.35',
  dbtype: 'sqlite',
  lang: 'en',
  case: 'first-letter',
  timezone: 'UTC',
  articlepath: '/w/index.php/$1',
  scriptpath: '/w',
  legaltitlechars: ' %!"$&\'()*,\\-.\\/0-9:;=?@A-Z\\\\^_`a-z~\\x80-\\xFF+',
  thumblimits: [120, 150, 180, 200, 250, 300],
  imagelimits: [320, 640, 800, 1024, 1280, 2560].map((width) => ({ width, height: (width * 3) / 4 })),
};

/** A session MediaWiki would load: a non-empty `wiki_session` other than PHP's `deleted`. */
function sessionOf(cookieHeader) {
  const m = /(?:^|;\s*)wiki_session=([^;]*)/.exec(cookieHeader ?? '');
  if (!m || m[1] === '' || m[1] === 'deleted') return undefined;
  const name = /(?:^|;\s*)wikiUserName=([^;]*)/.exec(cookieHeader)?.[1] ?? 'Anonymous';
  return { id: m[1], name };
}

function queryModules(params) {
  return ['list', 'meta', 'prop', 'generator'].flatMap((p) => (params.get(p) ?? '').split('|').filter(Boolean));
}

function queryResult(params, modules, session) {
  const query = {};
  for (const m of modules) {
    if (m === 'allpages') {
      const from = params.get('apfrom') ?? 'A';
      const n = Math.min(500, Number(params.get('aplimit') ?? 10) || 10);
      query.allpages = Array.from({ length: n }, (_, i) => ({ pageid: 1000 + i, ns: 0, title: `${from} page ${i}` }));
    } else if (m === 'siteinfo') query.general = general;
    else if (m === 'userinfo') query.userinfo = { id: session ? 7 : 0, name: session?.name ?? '127.0.0.1', groups: session ? ['*', 'user'] : ['*'] };
    else if (m === 'filearchive') query.filearchive = [{ id: 1, name: 'Lab-red.png', ns: 6, title: 'File:Lab-red.png' }];
    else query[m] = [];
  }
  return { batchcomplete: '', query };
}

/**
 * Cache-Control, Vary and Expires as ApiMain::sendCacheHeaders sets them: a `public` module answers
 * `public` only for a requester without a session (or with uselang=content) and only with smaxage;
 * a session holder gets `private` with its maxage; private modules never vary on cookies.
 */
function cacheHeaders(params, modules, session) {
  const maxage = Number(params.get('maxage') ?? 0) || 0;
  const smaxage = Number(params.get('smaxage') ?? 0) || 0;
  const isPublic = modules.length > 0 && modules.every((m) => PUBLIC_MODULES.has(m)) && params.get('uselang') !== 'user';
  if (!isPublic) return { 'cache-control': `private, must-revalidate, max-age=${maxage}` };
  if (session && params.get('uselang') !== 'content') {
    return { vary: API_VARY, 'cache-control': `private, must-revalidate, max-age=${maxage}` };
  }
  if (smaxage === 0) return { vary: API_VARY, 'cache-control': NOT_CACHEABLE };
  return {
    vary: API_VARY,
    expires: maxage ? new Date(Date.now() + maxage * 1000).toUTCString() : EPOCH,
    'cache-control': `s-maxage=${smaxage}, max-age=${maxage}, public`,
  };
}

function apiAnswer(params, cookieHeader) {
  const session = sessionOf(cookieHeader);
  const action = params.get('action') ?? 'help';
  const json = { 'content-type': 'application/json; charset=utf-8', 'content-disposition': 'inline; filename=api-result.json' };
  if (action === 'query') {
    const modules = queryModules(params);
    return { headers: { ...json, ...cacheHeaders(params, modules, session) }, body: queryResult(params, modules, session) };
  }
  if (action === 'logout') {
    // 55-user-logout: the session and user id cookies are deleted.
    const gone = (name) => `${name}=deleted; expires=${EPOCH}; Max-Age=0; path=/; HttpOnly`;
    return { headers: { ...json, 'cache-control': NOT_CACHEABLE, 'set-cookie': [gone('wiki_session'), gone('wikiUserID')] }, body: {} };
  }
  const info = `Unrecognized value for parameter "action": ${action}.`;
  return {
    headers: { ...json, 'mediawiki-api-error': 'badvalue', 'cache-control': NOT_CACHEABLE },
    body: { error: { code: 'badvalue', info, '*': 'See http://127.0.0.1/w/api.php for API usage.' } },
  };
}

const page = Buffer.from(
  `<!DOCTYPE html>\n<html lang="en"><head><meta charset="UTF-8"/><title>LabWiki</title></head>\n<body>${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(100)}</body></html>\n`,
);
let answered = 0;

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    setTimeout(() => {
      const url = new URL(req.url ?? '/', 'http://wiki');
      const common = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' };
      if (++answered % 10 === 0) common.connection = 'close';
      if (url.pathname !== '/w/api.php') {
        res.writeHead(200, {
          ...common,
          'content-type': 'text/html; charset=UTF-8',
          vary: 'Accept-Encoding, Cookie',
          expires: EPOCH,
          'cache-control': NOT_CACHEABLE,
          'content-length': page.length,
        });
        res.end(page);
        return;
      }
      const form = req.method === 'POST' ? new URLSearchParams(Buffer.concat(chunks).toString('latin1')) : undefined;
      const { headers, body } = apiAnswer(form ?? url.searchParams, req.headers.cookie);
      const bytes = Buffer.from(JSON.stringify(body));
      res.writeHead(200, { ...common, ...headers, 'content-length': bytes.length });
      res.end(bytes);
    }, thinkMs);
  });
});
server.listen(port, '127.0.0.1');
