/**
 * What a Wikibase API request names in its parameters, pure: the entity ids (`ids`, a claim GUID's
 * entity, a datavalue's entities), the datatype of its values (given, or a property's), and what
 * that makes it read (a remote repository, a client wiki, redirects). The module table
 * (modules.ts) reads its Wikibase modules' facts through these.
 */
import { type PhpArray, phpStringParam, split } from './php-input.js';
import { entityIdOfNumber, mayBeRedirect } from './entities.js';

const values = (query: PhpArray, name: string) => split(phpStringParam(query, name));

/**
 * The datatype wbparsevalue and wbformatvalue give their values: `datatype=`, or else the datatype
 * of `property=`, which only the wiki knows (ParseValue::getParser and getValidator,
 * FormatSnakValue::getDataTypeId read it with PropertyDataTypeLookup; each module refuses both at
 * once): FROM_PROPERTY, any datatype as far as the gateway can tell. Undefined when neither is given.
 */
const FROM_PROPERTY = Symbol('the datatype of property=');
function valueDatatype(query: PhpArray): string | typeof FROM_PROPERTY | undefined {
  const datatype = phpStringParam(query, 'datatype');
  if (datatype !== undefined && datatype !== '') return datatype;
  return phpStringParam(query, 'property') !== undefined ? FROM_PROPERTY : undefined;
}

/** Whether the values' datatype may be one `test` accepts: it is, or it is a property's. */
function datatypeMayBe(query: PhpArray, test: (datatype: string) => boolean): boolean {
  const datatype = valueDatatype(query);
  return datatype === FROM_PROPERTY || (datatype !== undefined && test(datatype));
}

/**
 * wbparsevalue&validate: Wikibase's validators of the datatype run on the parsed value
 * (repo/includes/Api/ParseValue.php). An entity datatype's check that the entity exists reads the
 * entities the values name; commonsMedia, geo-shape and tabular-data check a page on the
 * configured remote repository (Commons), whose changes no recentchanges row of this wiki shows.
 * A property's datatype may be any of them.
 */
export const validatesEntities = (query: PhpArray) => query.has('validate') && datatypeMayBe(query, (d) => d.startsWith('wikibase-'));
const REMOTE_DATATYPES = new Set(['commonsMedia', 'geo-shape', 'tabular-data']);
export const validatesRemotely = (query: PhpArray) => query.has('validate') && datatypeMayBe(query, (d) => REMOTE_DATATYPES.has(d));

/** Whether the values take the datatype of `property=` (the wiki's to say, not the request's). */
export const datatypeFromProperty = (query: PhpArray): boolean => valueDatatype(query) === FROM_PROPERTY;

/** The property whose datatype the values take (its page is read for it), or none. */
export const datatypeProperty = (query: PhpArray): string[] => (valueDatatype(query) === FROM_PROPERTY ? [phpStringParam(query, 'property')!] : []);

/**
 * wbformatvalue of commonsMedia in the verbose HTML dispositions: CommonsInlineImageFormatter
 * reads the file (its thumbnail, its size) from the file repository, Commons' for a remote one
 * (WikibaseValueFormatterBuilders::newCommonsMediaFormatter, for the formats
 * SnakFormat::isPossibleFormat serves from FORMAT_HTML_VERBOSE); `text/html` is
 * CommonsLinkFormatter, a link made from the name alone, and wikitext or plain text the name.
 */
const INLINE_IMAGE_FORMATS = new Set(['text/html; disposition=verbose', 'text/html; disposition=verbose-preview']);
export const rendersRemoteFile = (query: PhpArray) =>
  INLINE_IMAGE_FORMATS.has(phpStringParam(query, 'generate') ?? '') && datatypeMayBe(query, (d) => d === 'commonsMedia');

/**
 * wbgetentities by `sites` and `titles` with `normalize`: a title the repository does not find
 * directly is normalized by the client wiki itself, over HTTP, following that wiki's redirects
 * (Wikibase REL1_39 repo/includes/Api/EntityByTitleHelper.php getEntityId → normalizeTitle →
 * Site::normalizePageName). A redirect retargeted there leaves no row here.
 */
export const normalizesAtAClient = (query: PhpArray) => query.has('normalize') && query.has('sites') && query.has('titles');

/** Wikibase's entity ids in a request parameter (`ids=Q1|P2`, `entity=Q1`). */
export const idsIn =
  (...names: string[]) =>
  (query: PhpArray): string[] | undefined => {
    const ids = names.flatMap((n) => values(query, n));
    return ids.length > 0 ? ids : undefined;
  };

/** The entity a claim GUID belongs to: `Q1$5627…` → Q1 (Wikibase's GuidParser: the part before `$`, any case). */
export function entityOfGuid(guid: string): string | undefined {
  const dollar = guid.indexOf('$');
  return dollar > 0 ? guid.slice(0, dollar).toUpperCase() : undefined;
}

export const claimEntities = (query: PhpArray): string[] | undefined => {
  const ids = [
    ...values(query, 'entity'),
    ...values(query, 'claim')
      .map(entityOfGuid)
      .filter((id): id is string => id !== undefined),
  ];
  return ids.length > 0 ? ids : undefined;
};

/**
 * wbformatvalue: the entities its `datavalue` references (an entity-id value prints the entity's
 * label; a quantity's unit is an entity URI whose label it prints) and its `property` (whose
 * datatype decides the formatting). Wikibase's formatters read labels through the term lookup
 * (repo/includes/Api/FormatSnakValue.php), so the answer changes with those entities' labels.
 * Undefined (any change: the answer names no entity) when the datavalue names one in a way not
 * read here.
 */
export function formatValueEntities(query: PhpArray): string[] | undefined {
  const out = values(query, 'property');
  const raw = phpStringParam(query, 'datavalue');
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  // A coordinate's globe is printed, as a label, only by the diff formatter (below).
  const unprinted = /disposition=/i.test(phpStringParam(query, 'generate') ?? '') ? URIS_PRINTED_AS_THEY_ARE : URIS_NOT_PRINTED_BUT_IN_DIFFS;
  return collectEntityIds(value, out, 0, unprinted) ? out : undefined;
}

/**
 * wbformatvalue and wbformatentities print labels through a lookup that follows redirects
 * (CachingFallbackLabelDescriptionLookup::getTerm → lookupLatestRevisionResolvingRedirect): Q6,
 * a redirect to Q1 since a merge, prints Q1's label, which changes with no change naming Q6 (a
 * row, a PURGE, a write of Item:Q1 alone). Neither the request nor the answer can tell which ids
 * are redirects, and the answer does not name the target (its link is Q6's own title:
 * EntityIdHtmlLinkFormatter). What does tell is a job: an edit of Item:Q1 queues HTMLCacheUpdateJob
 * for the pages redirecting to it (`table=redirect`), which PURGEs Item:Q6. So, as for the links
 * tables, such an answer keeps the short TTL defaults (`jobs`) when it formats an entity that may
 * be a redirect (entities.ts mayBeRedirect), or one it cannot read.
 */
export const formatsRedirectable = (ids: string[] | undefined) => ids === undefined || ids.some(mayBeRedirect);

/**
 * An entity's URI: its repository's concept base, then its id (SuffixEntityIdParser). The base
 * is whatever the repository sets (`wikibase-conceptbaseuri` in siteinfo: `…/entity/` on
 * Wikidata, `…/wiki/Special:EntityPage/` on others), so any URI whose last segment is an id is
 * read as one: reading one that is not only adds a dependency.
 */
const ENTITY_URI = /^[A-Za-z][A-Za-z0-9+.-]*:\S*[/:=]([A-Za-z]\d+)$/;

/**
 * The URIs a datavalue carries that its formatters print without a label: a time's calendar model
 * (Wikibase's HtmlTimeFormatter and TimeDetailsFormatter name the two calendars they know from
 * messages and print any other as its URI). It is one of Wikidata's URIs
 * (`http://www.wikidata.org/entity/Q1985727`) on every wiki, so read as an id it made every time
 * format depend on this wiki's Q1985727, and keep the short TTL of a value that may name a
 * redirect. A coordinate's globe is not one in a diff: the diff formatter prints the label of a
 * globe under the wiki's own concept base (WikibaseValueFormatterBuilders::newGlobeCoordinateFormatter:
 * GlobeCoordinateDetailsFormatter with a VocabularyUriFormatter, for `text/html; disposition=diff`).
 */
const URIS_PRINTED_AS_THEY_ARE: ReadonlySet<string> = new Set(['calendarmodel']);

/**
 * Outside a diff (any `generate` naming no `disposition=`: plain text, wikitext, HTML), the
 * coordinate formatters print the latitude and longitude alone (GlobeCoordinateFormatter): the
 * globe, Wikidata's Q2 on every wiki by default, read as an id kept every coordinate's format on
 * the short TTL and evicted them all at each edit of this wiki's Q2
 * (test/unit/formatted-entities-that-may-be-redirects-keep-the-short-ttl.test.ts).
 */
const URIS_NOT_PRINTED_BUT_IN_DIFFS: ReadonlySet<string> = new Set(['calendarmodel', 'globe']);

/**
 * The entities a datavalue names, into `out`: an entity-id value's `id` and its legacy form
 * `entity-type` + `numeric-id` (EntityIdValue::newFromArray reads the pair, Wikibase's
 * deserializer the `id`: both, when both are given), and entity URIs (a quantity's unit), but
 * those `unprinted` names (URIS_PRINTED_AS_THEY_ARE, URIS_NOT_PRINTED_BUT_IN_DIFFS). False when it names one in a form not
 * read here (an entity type without a number, a value nested deeper than read): then only any
 * change covers it.
 */
function collectEntityIds(node: unknown, out: string[], depth: number, unprinted: ReadonlySet<string>): boolean {
  if (typeof node !== 'object' || node === null) return true;
  if (depth > 8) return false;
  const o = node as Record<string, unknown>;
  if (o['numeric-id'] !== undefined || o['entity-type'] !== undefined) {
    const legacy = o['numeric-id'] === undefined ? undefined : entityIdOfNumber(o['entity-type'], o['numeric-id']);
    if (legacy !== undefined) out.push(legacy);
    else if (o['numeric-id'] !== undefined || typeof o['id'] !== 'string') return false;
  }
  for (const [key, v] of Object.entries(o)) {
    if (typeof v === 'string') {
      if (key === 'id') out.push(v);
      if (unprinted.has(key)) continue;
      const uri = ENTITY_URI.exec(v);
      if (uri) out.push(uri[1]!);
    } else if (typeof v === 'object' && !collectEntityIds(v, out, depth + 1, unprinted)) return false;
  }
  return true;
}

/**
 * Whether wbformatvalue or wbparsevalue deals in time values, whose text Wikibase builds from
 * interface messages a MediaWiki: page may override: month names (Language::sprintfDate, read by
 * MwTimeIsoFormatter and the time parsers) and `wikibase-time-precision-*`. A time datavalue, the
 * `time` datatype, a property's datatype (any), or a datavalue not read.
 */
export const readsTimeMessages = (query: PhpArray): boolean => {
  if (datatypeMayBe(query, (d) => d === 'time')) return true;
  if (phpStringParam(query, 'parser') === 'time') return true;
  const raw = phpStringParam(query, 'datavalue');
  if (raw === undefined) return false;
  try {
    const value = JSON.parse(raw) as unknown;
    return typeof value !== 'object' || value === null || (value as Record<string, unknown>)['type'] === 'time';
  } catch {
    return true;
  }
};

/** wbsearchentities `type`, list=wbsearch `wbstype` (a generator's `gwbstype`): `item` by default. */
export const searchTypeOf =
  (param: string) =>
  (query: PhpArray, generator: boolean): string =>
    phpStringParam(query, generator ? `g${param}` : param) ?? 'item';
