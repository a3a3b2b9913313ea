// A wiki with the Wikibase stand-in (test/wiki-extension/WikiedgeWikibase), for tests that need
// Wikibase's modules: its own php -S on a fresh data folder, made by
// `scripts/wiki/setup.sh --wikibase` (or `--wikibase-items-in-main`), seeded with P1-P5, Q1-Q7.
//
// API:
//   const wiki = await startWikibaseWiki({ itemsInMain?: boolean, cdn?: 'HOST:PORT' })
//     -> { url: 'http://127.0.0.1:PORT', api: url + '/w/api.php', data: DATA_DIR,
//          itemsInMain: boolean, stop(): Promise<void> }   // stop = stop.sh --purge
//     With `cdn`, $wgCdnServers = [cdn] and $wgUseCdn = true, so saves send PURGEs there.
//     Takes ~30 s (install.php + seed); start one per test file in beforeAll.
//   const cookie = await wikibaseLogin(wiki, 'admin' | 'user')   // Cookie header (clientlogin)
//   const res = await wbWrite(wiki, cookie, 'wbsetlabel', { id: 'Q1', language: 'en', value: 'x' })
//     -> { status, headers, body (text), json }: fetches a CSRF token for `cookie` ('' = anonymous,
//        token '+\'), POSTs action=MODULE&format=json&...params&token=...; does not throw on API
//        errors (read json.error).
//   itemTitle(wiki, 'Q1') -> 'Item:Q1' or 'Q1' (the page title of an item in this layout)
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { http, type TestResponse } from './http.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, loginCookies } from './wiki.js';

const execFileP = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface WikibaseWiki {
  url: string;
  api: string;
  data: string;
  itemsInMain: boolean;
  stop(): Promise<void>;
}

export async function startWikibaseWiki(opts: { itemsInMain?: boolean; cdn?: string } = {}): Promise<WikibaseWiki> {
  const data = await mkdtemp(path.join(os.tmpdir(), 'wikiedge-wikibase.'));
  const args = [
    path.join(repoRoot, 'scripts/wiki/setup.sh'),
    '--data',
    data,
    '--no-debug',
    opts.itemsInMain ? '--wikibase-items-in-main' : '--wikibase',
    ...(opts.cdn ? ['--cdn', opts.cdn] : []),
  ];
  const stop = async (): Promise<void> => {
    await execFileP('bash', [path.join(repoRoot, 'scripts/wiki/stop.sh'), data, '--purge'], { cwd: repoRoot }).catch(() => undefined);
  };
  let stdout: string;
  try {
    ({ stdout } = await execFileP('bash', args, { cwd: repoRoot, maxBuffer: 16 << 20 }));
    if (opts.cdn) await execFileP('bash', [path.join(repoRoot, 'scripts/wiki/toggle.sh'), data, 'useCdn=true']);
  } catch (err) {
    await stop();
    const e = err as Error & { stderr?: string };
    throw new Error(`setup.sh --wikibase failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  const url = /^WIKI_URL=(.*)$/m.exec(stdout)?.[1];
  if (!url) throw new Error(`setup.sh printed no WIKI_URL: ${stdout}`);
  return { url, api: `${url}/w/api.php`, data, itemsInMain: !!opts.itemsInMain, stop };
}

export function wikibaseLogin(wiki: WikibaseWiki, who: 'admin' | 'user'): Promise<string> {
  return who === 'admin' ? loginCookies(wiki.url, ADMIN_USER, ADMIN_PASS) : loginCookies(wiki.url, LAB_USER, LAB_USER_PASS);
}

export function itemTitle(wiki: WikibaseWiki, id: string): string {
  return wiki.itemsInMain ? id : `Item:${id}`;
}

export async function wbWrite(
  wiki: WikibaseWiki,
  cookie: string,
  module: string,
  params: Record<string, string>,
): Promise<TestResponse & { json: Record<string, unknown> }> {
  let token = '+\\';
  if (cookie !== '') {
    const t = await http(`${wiki.api}?action=query&meta=tokens&format=json`, { headers: { cookie } });
    token = (JSON.parse(t.body) as { query: { tokens: { csrftoken: string } } }).query.tokens.csrftoken;
  }
  const res = await http(wiki.api, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie !== '' && { cookie }) },
    body: new URLSearchParams({ action: module, format: 'json', ...params, token }).toString(),
  });
  return { ...res, json: JSON.parse(res.body) as Record<string, unknown> };
}
