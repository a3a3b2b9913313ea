/**
 * vcl_recv + vcl_hash for api.php: what the request is, whether it may be looked up, and its key.
 * Pure: literal inputs in, a decision out.
 */
import type { Identity } from '../mediawiki/identity.js';
import { hasArrayShapes, type PhpArray, phpStringParam } from '../mediawiki/php-input.js';
import type { ModuleRule } from '../config/config.js';
import { passesByDefault } from '../mediawiki/modules.js';

/**
 * The `smaxage` we add when the client did not send one, so that MediaWiki tells us through
 * `Cache-Control: public` whether it allows sharing (ApiMain::sendCacheHeaders: "If both are 0 →
 * private"). An unusual value, so that a module's own setCacheMaxAge() (which wins over the
 * parameter: test/unit/cache-policy-captures.test.ts, 83-anon-labbadges-maxage-param) is told apart from our probe.
 */
export const SMAXAGE_PROBE = 4_242_424;

export type { PassReason } from '../words/outcomes.js';
import type { PassReason } from '../words/outcomes.js';

/** Formats whose output is not an HTML page (everything else, and unknown values, render as HTML). */
const NON_HTML_FORMATS = new Set(['json', 'xml', 'php', 'none']);

/**
 * ApiMain: the default format is jsonfm, and an unknown `format` value makes MediaWiki fall back
 * to the HTML printer for its error page; the HTML echoes the request URL (ApiFormatBase::closePrinter(), api-format-prettyprint-header-hyperlinked).
 */
export function isHtmlFormat(query: PhpArray): boolean {
  const format = phpStringParam(query, 'format');
  return format === undefined || !NON_HTML_FORMATS.has(format);
}

/**
 * ApiBase::explodeMultiValue(): a value starting with U+001F is split on U+001F, anything else
 * on `|`.
 */
function multiValue(value: string): string[] {
  // One value, most often (`meta=siteinfo`): no split and no filter.
  if (!value.includes('|') && !value.startsWith('\x1f')) return value === '' ? [] : [value];
  return (value.startsWith('\x1f') ? value.slice(1).split('\x1f') : value.split('|')).filter(Boolean);
}

/** The modules a request runs: the action, and for action=query its list/prop/meta submodules. */
export function modulesOf(query: PhpArray): string[] {
  const action = phpStringParam(query, 'action') ?? 'help';
  if (action !== 'query') return [action];
  const out = ['query'];
  // ApiQuery runs the generator as a module of its own (ApiQuery::executeGeneratorModule).
  const generator = phpStringParam(query, 'generator');
  if (generator) out.push(generator);
  for (const group of ['list', 'prop', 'meta']) {
    const value = phpStringParam(query, group);
    if (value) out.push(...multiValue(value));
  }
  return out;
}

/**
 * Rules the gateway applies unless the operator's WIKIEDGE_MODULES names the module (the module
 * table's `pass`, mediawiki/modules.ts): list=random (and generator=random) must answer something
 * else each time, and MediaWiki lets any cache share it (ApiQueryRandom: public cache mode), so a
 * stored answer would be repeated until its TTL.
 */
const PASS_RULE: ModuleRule = { pass: true };

/** The module rules that apply: those of the action, or of every query submodule it runs. */
export function applicableRule(modules: readonly string[], operatorRules: Readonly<Record<string, ModuleRule>>): ModuleRule {
  const ruleOf = (name: string): ModuleRule | undefined =>
    Object.hasOwn(operatorRules, name) ? operatorRules[name] : passesByDefault(name) ? PASS_RULE : undefined;
  const named = modules.length > 1 ? modules.slice(1) : modules;
  let pass = false;
  let ttlSeconds: number | undefined;
  let shareAnonymousPrivate = named.length > 0;
  for (const name of modules) {
    const rule = ruleOf(name);
    if (rule?.pass) pass = true;
    if (rule?.ttlSeconds !== undefined) ttlSeconds = Math.min(ttlSeconds ?? Infinity, rule.ttlSeconds);
  }
  for (const name of named) if (!ruleOf(name)?.shareAnonymousPrivate) shareAnonymousPrivate = false;
  // dependsOn overrides the table only when every module named has one; the widest wins.
  const given = named.map((name) => ruleOf(name)?.dependsOn);
  const dependsOn =
    given.length > 0 && given.every((d) => d !== undefined) ? (given.includes('any') ? 'any' : given.includes('pages') ? 'pages' : 'nothing') : undefined;
  return {
    pass,
    shareAnonymousPrivate,
    ...(ttlSeconds !== undefined && { ttlSeconds }),
    ...(dependsOn !== undefined && { dependsOn }),
  };
}

export interface ApiRequestFacts {
  readonly method: string;
  /** The path is exactly the configured api.php path (not `/w/api.php/x.css`, `//w/api.php`, …). */
  readonly canonicalPath: boolean;
  /** The query string begins with `?`, which servers read differently (words/target.ts queryIsAmbiguous). */
  readonly ambiguousQuery: boolean;
  readonly query: PhpArray;
  readonly identity: Identity;
  readonly hasBody: boolean;
  readonly rule: ModuleRule;
}

export type Classification = { readonly verdict: 'pass'; readonly reason: PassReason } | { readonly verdict: 'lookup' };

export function classify(facts: ApiRequestFacts): Classification {
  // Only GET and HEAD are ever answered from the cache; POST carries logins and edits.
  if (facts.method !== 'GET' && facts.method !== 'HEAD') return pass('method');
  // Cacheability never follows a path shape: only the one canonical path is keyed.
  if (!facts.canonicalPath) return pass('not-canonical-path');
  // Keys are what PHP runs; where servers disagree on that, there is no key.
  if (facts.ambiguousQuery) return pass('ambiguous-query');
  // `a[]=1&a[]=2` and `a[x]=` mean different things in different orders; not worth the risk.
  if (hasArrayShapes(facts.query)) return pass('array-params');
  // A GET with a body: nothing here knows how the wiki's stack reads it, so do not share it.
  if (facts.hasBody) return pass('request-body');
  if (facts.identity.kind === 'unsure') return pass('credentials-unclear');
  if (facts.rule.pass) return pass('module-rule');
  return { verdict: 'lookup' };
}

function pass(reason: PassReason): Classification {
  return { verdict: 'pass', reason };
}

/**
 * The query as PHP will see it, in a canonical order: `$_GET` already applied PHP's rules (last
 * duplicate wins, `.`/space in names → `_`, url-decoding), so sorting its string entries gives one
 * spelling per meaning. Two URLs share a key only if MediaWiki sees the same parameters.
 */
export function canonicalQuery(query: PhpArray): string {
  const names = [...query.keys()].sort();
  let out = '';
  for (const name of names) {
    const value = query.get(name);
    if (typeof value !== 'string') continue; // classify() already refused array shapes
    out += `${out ? '&' : ''}${encoded(name)}=${encoded(value)}`;
  }
  return out;
}

/** What encodeURIComponent leaves as it is (ECMA-262 uriUnreserved): most names and values of a query. */
const URI_UNRESERVED = /^[A-Za-z0-9\-_.!~*'()]*$/;

/** encodeURIComponent(s), with no call for a string it would return unchanged (bench/micro-miss.mjs canonicalQuery). */
function encoded(s: string): string {
  return URI_UNRESERVED.test(s) ? s : encodeURIComponent(s);
}

/** Request headers other than Cookie that MediaWiki's Vary names and that we key on. */
export interface KeyedHeaders {
  readonly treatAsUntrusted: string | undefined;
  readonly forwardedProto: string;
  /** Only when the request has an `origin` parameter: ApiMain::handleCORS() reads the Origin header then. */
  readonly origin: string | undefined;
  /** What of Accept-Language the wiki's language variant depends on (mediawiki/accept-language.ts variantPreferences). */
  readonly acceptVariants: string | undefined;
}

/**
 * Every field of KeyedHeaders, in key order. The key (cacheKey) and the fresh-hit path's memo
 * (sameKeyedHeaders) both walk this list, and the compiler holds it equal to KeyedHeaders: a
 * keyed header added there and forgotten here does not build.
 */
export const KEYED_FIELDS = ['forwardedProto', 'treatAsUntrusted', 'origin', 'acceptVariants'] as const;
type KeyedField = (typeof KEYED_FIELDS)[number];
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const KEYED_FIELDS_COVER_KEYED_HEADERS: SameKeys<KeyedField, keyof KeyedHeaders> = true;
void KEYED_FIELDS_COVER_KEYED_HEADERS;

/** Whether two requests' keyed headers give the same key. */
export function sameKeyedHeaders(a: KeyedHeaders, b: KeyedHeaders): boolean {
  for (const field of KEYED_FIELDS) if (a[field] !== b[field]) return false;
  return true;
}

/**
 * The lookup key: path + canonical query, then identity slot and keyed header values. It begins
 * with the URL key (which holds no newline: canonicalQuery encodes), so that the store can keep
 * an entry's URL key as a slice of its key instead of a second copy (store.ts).
 */
export function cacheKey(urlKey: string, identity: Identity, headers: KeyedHeaders): string {
  const slot = identity.kind === 'session' ? `s:${identity.slot}:${identity.variant}` : 'anon';
  let key = `${urlKey}\n${slot}`;
  // Present-but-empty differs from absent: WebRequest::getHeader() !== false is true for ''.
  for (const field of KEYED_FIELDS) key += `\n${present(headers[field])}`;
  return key;
}

function present(value: string | undefined): string {
  return value === undefined ? '-' : `=${value}`;
}

/** Request headers named in a response's Vary that this key accounts for. */
export const KEYED_VARY = new Set([
  'cookie', // the identity slot
  'authorization', // the identity slot
  'accept-encoding', // normalised: shared fetches ask the wiki for the identity encoding
  'treat-as-untrusted',
  'x-forwarded-proto',
  'origin',
]);

/** The upstream request target: the client's own, plus the smaxage probe where that is harmless. */
export function upstreamTarget(apiPath: string, rawQuery: string, probe: boolean): string {
  if (!probe) return rawQuery ? `${apiPath}?${rawQuery}` : apiPath;
  const sep = rawQuery === '' || rawQuery.endsWith('&') ? '' : '&';
  return `${apiPath}?${rawQuery}${sep}smaxage=${SMAXAGE_PROBE}`;
}

/** Whether to add the smaxage probe: never for HTML formats, which echo the URL in their body. */
export function shouldProbe(query: PhpArray): boolean {
  return !query.has('smaxage') && !isHtmlFormat(query);
}
