/**
 * Keys a reload (SIGHUP, cluster/reload.ts) cannot change: the listeners are bound, the workers
 * counted, and the logger made (pretty or JSON lines), once. Every other key is applied by a
 * reload, when it comes from the WIKIEDGE_CONFIG file or a `<KEY>_FILE` secret: the environment
 * is the one the process was given at start.
 */
import { type Config, type ConfigKey, FIELDS } from './fields.js';

export const FIXED_ON_RELOAD: readonly ConfigKey[] = ['host', 'port', 'adminHost', 'adminPort', 'workers', 'logFormat'];

/** Their variables, for --help and the README. */
export function restartOnlyVariables(): string[] {
  return FIXED_ON_RELOAD.map((key) => FIELDS[key].env);
}

/**
 * Keys that say which wiki the cache holds the answers of, and how its requests are told apart. A
 * reload that changes one hands no cached entry over to the new gateway (cluster/generations.ts,
 * cluster/tier-hand-over.ts): they would be served, as fresh, for requests they no longer answer.
 *
 * - `upstream`, `apiPath`: another wiki, or another api.php of it: the cache key is the query
 *   alone (policy/request.ts cacheKey), so an old entry would answer for the new wiki.
 * - `redisKeyPrefix`: one prefix per wiki sharing a Redis (its help); a new one says the cache is
 *   of another wiki, or is meant to start afresh.
 * - the identity keys (`cookiePrefix`, `sessionName`, `sessionJwtCookie`, `credentialCookies`,
 *   `harmlessCookies`, `credentialHeaders`, `credentialParams`: mediawiki/identity.ts): a cookie or header newly taken
 *   for a credential says that requests carrying it were shared as anonymous until now, and what
 *   they fetched must not be kept.
 *
 * test/in-process/reload-to-another-wiki-hands-nothing-over.test.ts.
 */
export const WIKI_KEYS: readonly ConfigKey[] = [
  'upstream',
  'apiPath',
  'redisKeyPrefix',
  'cookiePrefix',
  'sessionName',
  'sessionJwtCookie',
  'credentialCookies',
  'harmlessCookies',
  'credentialHeaders',
  'credentialParams',
];

/** The WIKI_KEYS whose values differ between `before` and `after`, by variable. Pure. */
export function wikiChanged(before: Config, after: Config): string[] {
  return WIKI_KEYS.filter((key) => comparable(before[key]) !== comparable(after[key])).map((key) => FIELDS[key].env);
}

/** A configuration value as a string that is equal for equal values (URLs, buffers, lists, maps). */
export function comparable(value: Config[ConfigKey]): string {
  if (value instanceof URL) return value.href;
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return JSON.stringify(value);
}
