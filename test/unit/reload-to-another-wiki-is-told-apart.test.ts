// Which reloads change the wiki the cache holds the answers of, or how its requests are told
// apart (src/config/reload-keys.ts WIKI_KEYS): those hand nothing over to the new gateway or
// workers (test/in-process/reload-to-another-wiki-hands-nothing-over.test.ts). Any other change
// (a TTL, a limit, the log level) hands the local tier over as before.
import { describe, expect, it } from 'vitest';
import { loadConfigWithOrigins } from '../../src/config/config.js';
import { wikiChanged } from '../../src/config/reload-keys.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:80' };
const load = (env: Record<string, string> = {}) => loadConfigWithOrigins({ ...base, ...env }).config;

describe('wikiChanged', () => {
  it.each([
    ['WIKIEDGE_UPSTREAM', 'http://other-wiki:80'],
    ['WIKIEDGE_API_PATH', '/mediawiki/api.php'],
    ['WIKIEDGE_REDIS_KEY_PREFIX', 'wikiedge:other:'],
    ['WIKIEDGE_COOKIE_PREFIX', 'otherwiki'],
    ['WIKIEDGE_SESSION_NAME', 'other_session'],
    ['WIKIEDGE_SESSION_JWT_COOKIE', 'false'],
    ['WIKIEDGE_CREDENTIAL_COOKIES', 'centralauth_*'],
    ['WIKIEDGE_HARMLESS_COOKIES', 'banner_session'],
    ['WIKIEDGE_CREDENTIAL_HEADERS', 'x-sso-user'],
    ['WIKIEDGE_CREDENTIAL_PARAMS', 'centralauthtoken,oauth_token'],
  ])('%s changed: the cache is of another wiki, nothing is handed over', (env, value) => {
    expect(wikiChanged(load(), load({ [env]: value }))).toEqual([env]);
  });

  it('another TTL, limit or log level: the same wiki, handed over', () => {
    expect(wikiChanged(load(), load({ WIKIEDGE_TTL_PUBLIC_SECONDS: '5', WIKIEDGE_MAX_URL_BYTES: '4096', WIKIEDGE_LOG_LEVEL: 'debug' }))).toEqual([]);
  });

  it('compares values, not their spelling', () => {
    expect(wikiChanged(load({ WIKIEDGE_UPSTREAM: 'http://wiki:80' }), load({ WIKIEDGE_UPSTREAM: 'http://wiki' }))).toEqual([]);
  });
});
