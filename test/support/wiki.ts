// Helpers for integration tests that talk to the throw-away MediaWiki made by scripts/wiki/setup.sh
// (URL and data folder come from inject('wikiUrl') / inject('wikiData'), see
// test/integration/global-setup.ts).
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { http, type TestResponse } from './http.js';

/** Accounts created by scripts/wiki/setup.sh (same env overrides as the script). */
export const ADMIN_USER = process.env['WIKI_ADMIN_USER'] ?? 'Admin';
export const ADMIN_PASS = process.env['WIKI_ADMIN_PASS'] ?? 'Adm1n-Lab-Passw0rd!';
export const LAB_USER = process.env['WIKI_USER_NAME'] ?? 'LabUser';
export const LAB_USER_PASS = process.env['WIKI_USER_PASS'] ?? 'User-Lab-Passw0rd!';

/** Runtime toggles kept in DATA/lab.json (read by the wiki on every request, no restart). */
export interface WikiToggles {
  /** $wgDebugToolbar: adds "debuginfo" to successful API results. */
  debug?: boolean;
  /** Badge item ids answered by action=wbavailablebadges, in order. */
  badges?: string[];
  /** $wgCdnServers (HOST:PORT): MediaWiki sends PURGE through these. */
  cdn?: string[];
  /** $wgCdnServersNoPurge (IP): trusted for X-Forwarded-For. */
  trustProxy?: string[];
  /** $wgUseCdn (note: true disables debuginfo). */
  useCdn?: boolean;
  /** wfDebug() output to DATA/logs/debug.log. */
  debugLog?: boolean;
}

/** The lines of DATA/logs/requests.log: one `METHOD URI` per request that reached the wiki. */
export async function upstreamRequests(wikiData: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path.join(wikiData, 'logs', 'requests.log'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text.split('\n').filter((line) => line !== '');
}

/** How many requests reached the wiki so far (optionally only lines matching `filter`). */
export async function upstreamRequestCount(wikiData: string, filter?: (line: string) => boolean): Promise<number> {
  const lines = await upstreamRequests(wikiData);
  return filter ? lines.filter(filter).length : lines.length;
}

/** Merge `toggles` into DATA/lab.json atomically (temp file + rename); effective for the next request. */
export async function setWikiToggle(wikiData: string, toggles: WikiToggles): Promise<void> {
  const file = path.join(wikiData, 'lab.json');
  const current = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(toggles)) {
    if (value !== undefined) next[key] = value;
  }
  const tmp = `${file}.tmp.${process.pid}.${Date.now()}`;
  await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`);
  await rename(tmp, file);
}

/** `http://host:port` or a full `.../api.php` URL -> the api.php URL. */
function apiUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/api.php') ? trimmed : `${trimmed}/w/api.php`;
}

/** Apply Set-Cookie headers to a name -> value jar (deletions remove the cookie). */
function applySetCookies(jar: Map<string, string>, setCookies: string[]): void {
  for (const header of setCookies) {
    const [pair = '', ...attrs] = header.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attrs.some((a) => {
      const [k = '', v = ''] = a.split('=').map((s) => s.trim());
      if (k.toLowerCase() === 'max-age') return Number(v) <= 0;
      if (k.toLowerCase() === 'expires') return Date.parse(v) <= Date.now();
      return false;
    });
    if (expired || value === 'deleted') jar.delete(name);
    else jar.set(name, value);
  }
}

function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}

/** The fields of the first form of an HTML page, as a browser would submit them unchanged. */
export function formFields(html: string): URLSearchParams {
  const form = html.slice(html.indexOf('<form'), html.indexOf('</form>'));
  const fields = new URLSearchParams();
  for (const [input] of form.matchAll(/<input[^>]*>/g)) {
    const name = /name=["']([^"']*)["']/.exec(input)?.[1];
    if (name) fields.set(name, (/value=["']([^"']*)["']/.exec(input)?.[1] ?? '').replace(/&amp;/g, '&'));
  }
  return fields;
}

/**
 * Log in the way a browser does, through index.php's Special:UserLogin form (at the wiki or
 * through the gateway): returns the Cookie header value the browser then holds.
 */
export async function formLoginCookies(baseUrl: string, user: string, pass: string): Promise<string> {
  const base = baseUrl.replace(/\/+$/, '');
  const jar = new Map<string, string>();
  const page = await fetch(`${base}/w/index.php?title=Special:UserLogin`, { redirect: 'manual' });
  applySetCookies(jar, page.headers.getSetCookie());
  const fields = formFields(await page.text());
  if (!fields.get('wpLoginToken')) throw new Error('no wpLoginToken in Special:UserLogin');
  fields.set('wpName', user);
  fields.set('wpPassword', pass);
  const res = await fetch(`${base}/w/index.php?title=Special:UserLogin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    body: fields.toString(),
  });
  applySetCookies(jar, res.headers.getSetCookie());
  await res.arrayBuffer();
  if (res.status !== 302 || !jar.has(`wikiUserName`)) throw new Error(`form login as ${user} failed: HTTP ${res.status}`);
  return cookieHeader(jar);
}

/**
 * Log in for real: `action=query&meta=tokens&type=login`, then POST `action=clientlogin`.
 * Returns a Cookie header value (e.g. `wiki_session=…; wikiUserID=3; wikiUserName=LabUser`).
 * `baseUrl` is the wiki's (or the gateway's) origin, or a full api.php URL.
 */
export async function loginCookies(baseUrl: string, user: string, pass: string): Promise<string> {
  const api = apiUrl(baseUrl);
  const jar = new Map<string, string>();

  const tokenRes = await fetch(`${api}?action=query&meta=tokens&type=login&format=json`, {
    redirect: 'manual',
  });
  applySetCookies(jar, tokenRes.headers.getSetCookie());
  const tokenBody = (await tokenRes.json()) as { query?: { tokens?: { logintoken?: string } } };
  const logintoken = tokenBody.query?.tokens?.logintoken;
  if (!logintoken) throw new Error(`no login token from ${api}: ${JSON.stringify(tokenBody)}`);

  const form = new URLSearchParams({
    action: 'clientlogin',
    username: user,
    password: pass,
    logintoken,
    loginreturnurl: `${new URL(api).origin}/`,
    format: 'json',
  });
  const loginRes = await fetch(api, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    body: form.toString(),
  });
  applySetCookies(jar, loginRes.headers.getSetCookie());
  const loginBody = (await loginRes.json()) as { clientlogin?: { status?: string; message?: string } };
  if (loginBody.clientlogin?.status !== 'PASS') {
    throw new Error(`clientlogin as ${user} failed: ${JSON.stringify(loginBody)}`);
  }
  return cookieHeader(jar);
}

/** The bot password scripts/wiki/setup.sh creates for ADMIN_USER (BotPasswordSessionProvider). */
export const BOT_LOGIN = `${ADMIN_USER}@${process.env['WIKI_BOT_APPID'] ?? 'wikiedge'}`;
export const BOT_PASS = process.env['WIKI_BOT_PASS'] ?? 'wikiedgebotpasswordforthetests00';

/**
 * Log in with the bot password (`action=login`, the way bots do): returns the Set-Cookie jar as
 * a name → value map. BotPasswordSessionProvider answers with its own `{prefix}_BPsession`.
 */
export async function botPasswordLogin(baseUrl: string): Promise<Map<string, string>> {
  const api = apiUrl(baseUrl);
  const jar = new Map<string, string>();
  const tokenRes = await fetch(`${api}?action=query&meta=tokens&type=login&format=json`, { redirect: 'manual' });
  applySetCookies(jar, tokenRes.headers.getSetCookie());
  const logintoken = ((await tokenRes.json()) as { query?: { tokens?: { logintoken?: string } } }).query?.tokens?.logintoken;
  if (!logintoken) throw new Error(`no login token from ${api}`);
  const loginRes = await fetch(api, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    body: new URLSearchParams({ action: 'login', lgname: BOT_LOGIN, lgpassword: BOT_PASS, lgtoken: logintoken, format: 'json' }).toString(),
  });
  applySetCookies(jar, loginRes.headers.getSetCookie());
  const body = (await loginRes.json()) as { login?: { result?: string } };
  if (body.login?.result !== 'Success') throw new Error(`bot password login failed: ${JSON.stringify(body)}`);
  return jar;
}

/**
 * A write at `baseUrl` (the wiki itself, or the gateway) as the holder of `cookie`: fetches a
 * CSRF token, POSTs `params` with it, returns the parsed answer (throws on an API error).
 */
export async function apiWrite(baseUrl: string, cookie: string, params: Record<string, string>): Promise<Record<string, unknown>> {
  const api = apiUrl(baseUrl);
  // ApiUserrights wants its own token type; every other write the CSRF token.
  const type = params['action'] === 'userrights' ? 'userrights' : 'csrf';
  const tokenRes = await fetch(`${api}?action=query&meta=tokens&type=${type}&format=json`, { headers: { cookie } });
  const token = ((await tokenRes.json()) as { query: { tokens: Record<string, string> } }).query.tokens[`${type}token`]!;
  const res = await fetch(api, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ format: 'json', ...params, token }).toString(),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (body['error']) throw new Error(`${params['action']} failed: ${JSON.stringify(body['error'])}`);
  return body;
}

/**
 * `action=logout` at `baseUrl` (the wiki, or the gateway) as the holder of `cookie`, the way
 * every client library does it (ApiLogout needs the CSRF token since 1.34): the answer as
 * received, so a test can read the Set-Cookie that deletes the session.
 */
export async function apiLogout(baseUrl: string, cookie: string): Promise<TestResponse> {
  const api = apiUrl(baseUrl);
  const tokens = await http(`${api}?action=query&meta=tokens&format=json`, { headers: { cookie } });
  const token = (JSON.parse(tokens.body) as { query: { tokens: { csrftoken: string } } }).query.tokens.csrftoken;
  return http(api, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ action: 'logout', token, format: 'json' }).toString(),
  });
}

/** Run the wiki's job queue now (maintenance/runJobs.php), as a cron job would. */
export async function runJobs(wikiData: string): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  await promisify(execFile)('php', ['/usr/share/mediawiki/maintenance/runJobs.php', '--conf', path.join(wikiData, 'LocalSettings.php'), '--quiet']);
}

/** Upload files straight into the wiki (maintenance/importImages.php), as an operator would. */
export async function importImages(wikiData: string, dir: string, overwrite = false): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  await promisify(execFile)('php', [
    '/usr/share/mediawiki/maintenance/importImages.php',
    '--conf',
    path.join(wikiData, 'LocalSettings.php'),
    '--user',
    ADMIN_USER,
    ...(overwrite ? ['--overwrite'] : []),
    '--extensions',
    'png',
    dir,
  ]);
}
