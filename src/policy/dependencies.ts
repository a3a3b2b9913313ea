/**
 * What a cached answer depends on, as tags a change can name (the invalidation's vocabulary):
 *
 *   p:<title key>   the page of that title (titles.ts titleKey)
 *   i:<page id>     the page of that id (a page keeps its id when it moves)
 *   n:<namespace>   any page of that namespace being created, changed, deleted or moved
 *   t:<type>        any Wikibase entity of that type changed, but its statements or
 *                   sitelinks alone (searches over its terms)
 *   u:<user name>   a session's answer, stored while whose session it is was known
 *                   (userTag): that user's writes, rights and blocks end it
 *   sl              a site-and-title lookup that found no item (SITELINKS): any item's
 *                   sitelinks changing, or an item created or deleted, may make it find one
 *   dt              an entity answer whose statements show their properties' datatypes
 *                   (DATATYPES): a property's deletion or restoration changes them, and
 *                   a revision of it no Wikibase API module made (changes.ts mayChangeDatatype)
 *   *               any change at all (the safe default: lists any change can alter, modules
 *                   whose dependencies cannot be bounded, answers that could not be read)
 *
 * Which class each module is in is the module table's (mediawiki/modules.ts); this module reads
 * the pages, namespaces and entities out of the request and the answer:
 * - page modules depend on the pages named in the request and, above all, on those the answer
 *   lists (`normalized`, `redirects`, `pages`: the canonical titles a change will name);
 * - namespace lists on their namespace;
 * - entity modules (wbgetentities, wbgetclaims, wbformatvalue, wbformatentities) on the page of
 *   every entity the request or the answer names, redirects' sources and targets included
 *   (mediawiki/entities.ts maps an id to its page: by title, or by page id for MediaInfo's `M123`); on any change when the answer could name
 *   more than the request and cannot be read, or the request names one in a form not read;
 * - entity searches on `t:<type>` of the type searched, never on wikitext edits;
 * - every other list and every unknown module on any change; interface messages on namespace 8;
 *   configuration on nothing. What changes with no change signal at all (live state) is not
 *   vouched for by the follower (changesAreSignalled).
 * A parse of a page depends on its templates too (a template edit re-renders it, and only the
 * job that follows purges the page): changes in the Template, Module and MediaWiki namespaces.
 * An operator's module rule (`dependsOn`) overrides the table.
 *
 * Answers that carry the server's clock (`curtimestamp=1`, siteinfo's `general.time`) are
 * flagged: their TTL is capped to seconds whatever the rest (bot frameworks read the wiki's
 * clock from them).
 */
import type { PhpArray } from '../mediawiki/php-input.js';
import { phpStringParam, phpTextParam, split } from '../mediawiki/php-input.js';
import { DEFAULT_NAMESPACES, type Namespaces, titleKey } from '../mediawiki/titles.js';
import { type DependencyClass, type ModuleFacts, factsOf } from '../mediawiki/modules.js';
import { entityOfGuid } from '../mediawiki/wikibase-params.js';
import { entityPageId, entityPageTitles, entityTypeTag, holderTypeOf, mayBeRedirect } from '../mediawiki/entities.js';

export type { DependencyClass } from '../mediawiki/modules.js';

export const ANY = '*';

/**
 * What an entity answer with statements depends on besides its entities: each snak shows its
 * property's datatype (`"datatype":"string"`: Wikibase's repo/includes/Api/ResultBuilder.php
 * and JsonDataTypeInjector add it through CallbackFactory::getCallbackToAddDataTypeToSnak from
 * the property's lookup), which no edit through Wikibase's API changes (a datatype is fixed at
 * creation; only the changePropertyDataType.php maintenance script changes it, in a revision with
 * a summary of its own) and its deletion takes away (the lookup throws PropertyDataTypeLookupException, caught: the
 * snak goes out without one). One tag for
 * every property: deletions of properties are rare, and an item's answer names hundreds of them.
 * Changes carry it for the deletion or restoration of a property's page, and for a revision of
 * one whose summary is no Wikibase module's (changes.ts mayChangeDatatype).
 */
export const DATATYPES = 'dt';

/**
 * wbgetentities by `sites` and `titles` that found no item (`missing`, with `site`): any item's
 * sitelinks changing may make it find one. Every change of an item but one of its statements alone
 * carries it (changes.ts addClasses), a change of its sitelinks alone (changes.ts
 * sitelinksOnlyComment: a client wiki's page moved or deleted, a sitelink set) carries it and not
 * its entity type: searches show no sitelink, so they stay.
 */
export const SITELINKS = 'sl';

/**
 * The tag of every answer stored for a session of `user` (steps/flow.ts, the store step): a
 * user purge (cache/purge.ts) ends them in one step, however many sessions the user holds and
 * whichever of them a process still remembers (policy/session-users.ts remembers
 * MAX_SESSIONS_PER_USER per user).
 */
export function userTag(user: string): string {
  return `u:${user}`;
}

/**
 * Whether an answer reads what MediaWiki's jobs update without a change signal (the links
 * tables, the search index, a parse of a stored page): such an answer keeps the short TTL
 * defaults even while the change follower vouches for the rest (a template edit reaches it
 * within the short TTL of the job run). MediaWiki updates those in jobs (RefreshLinksJob,
 * HTMLCacheUpdateJob) with no recentchanges row ($wgRCWatchCategoryMembership is off by default)
 * and no PURGE of an api.php URL.
 */
export function updatedByJobs(modules: readonly string[], query: PhpArray): boolean {
  return factsOf(modules).some((f) => (typeof f?.jobs === 'function' ? f.jobs(query) : f?.jobs === true));
}

/** The MediaWiki namespace: its pages override interface messages. */
const MESSAGE_NAMESPACE = 8;
/** Template, Module (Scribunto) and MediaWiki: what a rendering transcludes or reads. */
const RENDERING_NAMESPACES = [10, 828, MESSAGE_NAMESPACE];

export interface Dependencies {
  readonly tags: readonly string[];
  /** The answer carries the server's current time. */
  readonly clock: boolean;
  /**
   * The earliest expiry (ms) of a protection or block the answer shows, when one is still to
   * come: it ends then with no change signal (no log row, no PURGE), so the answer is kept no
   * longer (showsExpiries).
   */
  readonly expiresAt?: number;
}

export interface DependencyInput {
  readonly query: PhpArray;
  /** The action and, for action=query, its submodules (request.ts modulesOf). */
  readonly modules: readonly string[];
  /** The operator's override for this request's modules (config `dependsOn`). */
  readonly override: DependencyClass | undefined;
  /**
   * The answer's body parsed as JSON (json or JSONP answers), or undefined when it cannot be;
   * asked only when a page module needs the pages the answer names.
   */
  readonly answer: () => unknown;
  readonly namespaces?: Namespaces;
  /** The time, for expiries (ms). */
  readonly now?: number;
}

export function dependenciesOf(input: DependencyInput): Dependencies {
  const { query, modules } = input;
  const ns = input.namespaces ?? DEFAULT_NAMESPACES;
  const tags = new Set<string>();
  const clock = carriesClock(query, modules);
  // The generator's place (policy/request.ts modulesOf puts it first after `query`): a list or
  // prop of the same name runs too, with its own parameters (`list=wbsearch&generator=wbsearch`:
  // `wbstype` and `gwbstype` each name a type).
  const generator = phpStringParam(query, 'generator');
  const generatorAt = generator === undefined ? -1 : modules.indexOf(generator, 1);
  const facts = factsOf(modules);
  const classOf = (f: ModuleFacts | undefined, i: number): DependencyClass => {
    if (!f) return 'any';
    return typeof f.depends === 'function' ? f.depends(query, i === generatorAt) : f.depends;
  };
  // The action's own class only counts for action=query alone or with the pages it names; its
  // submodules decide the rest.
  const classes = input.override ? [input.override] : facts.map(classOf);
  if (classes.includes('any')) tags.add(ANY);
  if (!input.override) {
    facts.forEach((f, i) => {
      const asGenerator = i === generatorAt;
      if (classes[i] === 'namespace' && f?.namespace) {
        // As a generator its parameters take a `g` (ApiQueryGeneratorBase::encodeParamName).
        const param = f.namespace.param && asGenerator ? `g${f.namespace.param}` : f.namespace.param;
        for (const n of namespacesOf(query, param, f.namespace.fallback)) tags.add(n === -3 ? ANY : `n:${n}`);
      }
      if (classes[i] === 'terms' && f?.searchType) tags.add(entityTypeTag(f.searchType(query, asGenerator)));
      if (classes[i] === 'entities') {
        const before = tags.size;
        const named = f?.entityIds?.(query);
        // An id named in a form that maps to no page (not an entity id, a type the wiki keeps in
        // no namespace learned): no change would name it, so any change.
        for (const id of named ?? []) if (!addEntity(tags, id, ns)) tags.add(ANY);
        // The entities the answer names are the ones a change will name (a redirect's target);
        // without them (an answer in xml or php, or one that did not parse), any change, as for pages.
        const answer = input.answer();
        if (answer === undefined && !f?.answerNamesNoOther) tags.add(ANY);
        // With redirects=no a redirect is answered missing whatever its target (GetEntities:
        // resolveRedirects is `redirects` being `yes`, its default): its own page decides.
        collectAnswerEntities(answer, tags, ns, phpStringParam(query, 'redirects') !== 'no');
        // The request's entities unreadable and the answer naming none: any change.
        if (named === undefined && tags.size === before) tags.add(ANY);
      }
    });
  }
  // Interface messages it shows (ModuleFacts.messages): what the MediaWiki namespace's pages say.
  if (facts.some((f) => (typeof f?.messages === 'function' ? f.messages(query) : f?.messages === true))) tags.add(`n:${MESSAGE_NAMESPACE}`);
  if (classes.includes('pages')) {
    if (rendersTemplates(query, modules)) for (const n of RENDERING_NAMESPACES) tags.add(`n:${n}`);
    for (const t of requestTitles(query, modules[0] ?? '')) addTitle(tags, t, ns);
    for (const id of requestPageIds(query)) tags.add(`i:${id}`);
    // The pages the answer names are the ones a change will name; without them (an answer in
    // xml, php or HTML, or one that did not parse), any change.
    const answer = input.answer();
    if (answer === undefined) tags.add(ANY);
    else collectAnswerPages(answer, tags, ns);
  }
  const expiresAt = showsExpiries(modules, query) ? earliestExpiry(input.answer(), input.now ?? Date.now()) : undefined;
  return {
    tags: tags.has(ANY) ? [ANY, ...[...tags].filter((t) => t !== ANY)] : [...tags],
    clock,
    ...(expiresAt !== undefined && { expiresAt }),
  };
}

/**
 * Answers that show protections or blocks, which end at their expiry with no change signal
 * (MediaWiki writes no log row and sends no PURGE when a protection or a block runs out): they
 * keep the short TTL defaults even while the change follower vouches for the rest, and no longer
 * than the earliest expiry they show (earliestExpiry). list=allpages by protection type shows
 * no expiry: the short TTL bounds it.
 */
export function showsExpiries(modules: readonly string[], query: PhpArray): boolean {
  return factsOf(modules).some((f) => f?.expiries?.(query) === true);
}

/**
 * Answers that read what changes with no recentchanges row at all (siteinfo's replication lag and
 * statistics, wbparsevalue validating against a remote repository): the follower cannot vouch
 * for them, so they keep the short TTL defaults.
 */
export function readsLiveState(modules: readonly string[], query: PhpArray): boolean {
  return factsOf(modules).some((f) => f?.live?.(query) === true);
}

/**
 * Whether every change of what the answer reads is one the change follower sees, so that its long
 * TTL defaults may apply (invalidation/signals.ts ttlDefaults): not what jobs update, protections
 * and blocks that expire, nor live state.
 */
export function changesAreSignalled(
  modules: readonly string[],
  query: PhpArray,
  /** The operator said what every module of the request depends on (WIKIEDGE_MODULES dependsOn: request.ts applicableRule). */
  operatorSaysDependencies = false,
): boolean {
  // updatedByJobs, showsExpiries and readsLiveState in one pass: every miss asks.
  for (const f of factsOf(modules)) {
    // A module the table does not know (an extension's: prop=wbentityusage, pageviews, …) may
    // read what jobs or another service keep, which no recentchanges row names: the follower
    // cannot vouch for it (test/unit/an-unknown-module-keeps-the-short-ttl.test.ts), unless the
    // operator said what it depends on.
    if (f === undefined) {
      if (operatorSaysDependencies) continue;
      return false;
    }
    if (typeof f.jobs === 'function' ? f.jobs(query) : f.jobs === true) return false;
    if (f.expiries?.(query) === true || f.live?.(query) === true) return false;
    // An entity of another repository, named by its URI (Wikibase's federated properties,
    // FederatedPropertyId: `http://www.wikidata.org/entity/P31`): its changes are that wiki's.
    if (f.entityIds?.(query)?.some(isRemoteEntityId) === true) return false;
  }
  return true;
}

/** An entity id that is a URI: another repository's entity (federated properties), never a local page. */
function isRemoteEntityId(id: string): boolean {
  return id.includes('://');
}

/**
 * Whether a Wikibase answer reads entities no change of this wiki names: their pages guessed
 * (entityPagesGuessed), or, once its namespaces are learned, an entity or a term search of a type
 * this wiki keeps no pages of: another repository's (a Commons-like repository of MediaInfo
 * formats Wikidata's `P180`; `type=property` under federated properties searches the remote
 * repository: ApiEntitySearchHelper). Such an answer keeps the short TTL defaults, whatever the
 * follower (test/unit/entity-answers-no-change-names-keep-the-short-ttl.test.ts).
 */
export function entityChangesUnnamed(modules: readonly string[], query: PhpArray, namespaces: Namespaces): boolean {
  if (entityPagesGuessed(modules, namespaces)) return true;
  const kept = namespaces.entities;
  if (kept === undefined) return false;
  const facts = factsOf(modules);
  for (let i = 0; i < facts.length; i++) {
    const ids = facts[i]?.entityIds?.(query);
    if (ids?.some((id) => keptElsewhere(id, kept)) === true) return true;
    const searchType = facts[i]?.searchType;
    if (searchType === undefined) continue;
    // The generator is the module after the action (request.ts modulesOf, dependenciesOf): a
    // `list=wbsearch` beside `generator=wbsearch` reads its own `wbstype`.
    const type = searchType(query, i === 1 && phpStringParam(query, 'generator') === modules[i]);
    if (!kept.has(SEARCHED_PAGES_OF.get(type) ?? type)) return true;
  }
  return false;
}

/** The File namespace: WikibaseMediaInfo keeps an entity in a slot of each File: page. */
const FILE_NAMESPACE = 6;

/**
 * Whether an action=compare answer may be a diff of an entity's content: Wikibase renders one
 * with the labels of the entities its statements name (EntityDiffVisualizer's snak formatters),
 * and a label's edit names only that entity's page, so such an answer keeps the short TTL
 * defaults, whatever the follower. Only a diff (`prop` holding `diff`, its default, or `diffsize`) whose two
 * sides the answer shows in namespaces of no entity (`fromns`, `tons`: ApiComparePages::setVals,
 * with `prop=title`) is vouched for; supplied text, unknown namespaces and File: pages (a
 * MediaInfo slot) are not (test/unit/renderings-on-request-keep-the-short-ttl.test.ts).
 */
export function diffsEntityContent(modules: readonly string[], query: PhpArray, answer: () => unknown, namespaces: Namespaces): boolean {
  if (modules[0] !== 'compare') return false;
  const prop = phpStringParam(query, 'prop');
  // `diffsize` is the rendered diff's length (ApiComparePages::execute renders it whatever `prop` says).
  if (prop !== undefined && !split(prop).some((p) => p === 'diff' || p === 'diffsize')) return false;
  const kept = namespaces.entities;
  if (kept === undefined) return true;
  const compared = (answer() as { compare?: Record<string, unknown> } | undefined)?.compare;
  if (typeof compared !== 'object' || compared === null) return true;
  return [compared['fromns'], compared['tons']].some((n) => typeof n !== 'number' || n === FILE_NAMESPACE || [...kept.values()].includes(n));
}

/** An entity id of a type this wiki keeps no pages of (holderTypeOf: a form's is its lexeme's). */
function keptElsewhere(id: string, kept: ReadonlyMap<string, number>): boolean {
  const type = holderTypeOf(id);
  return type !== undefined && !kept.has(type);
}

/** The entity type whose pages a term search of a type reads: forms and senses are a lexeme's (WikibaseLexeme). */
const SEARCHED_PAGES_OF: ReadonlyMap<string, string> = new Map([
  ['form', 'lexeme'],
  ['sense', 'lexeme'],
]);

/**
 * Whether a Wikibase answer's entity pages would be named by a guess of the wiki's layout
 * (mediawiki/entities.ts entityPageTitles, before siteinfo is learned): on a repository whose
 * entity namespaces are named otherwise (`Objekt:Q1`), no change names the guessed pages, so
 * such an answer keeps the short TTL defaults until the layout is learned, whatever the follower
 * (test/unit/entity-answers-before-the-layout-is-learned-keep-the-short-ttl.test.ts).
 */
export function entityPagesGuessed(modules: readonly string[], namespaces: Namespaces): boolean {
  // Learned, even without an entity namespace (MediaInfo keeps its entities in File: pages,
  // named by page id): nothing is guessed any more.
  if (namespaces.entities !== undefined) return false;
  for (const f of factsOf(modules)) if (f?.entityIds !== undefined) return true;
  return false;
}

/** Nodes an expiry search visits at most: answers are bounded, the walk is too. */
const MAX_EXPIRY_NODES = 50_000;

/**
 * The earliest moment after `now` that a field named `expiry` or `…expiry` (protections,
 * blocks: `expiry`, `blockexpiry`) of the answer gives as an ISO 8601 timestamp; `infinity`
 * and past ones do not count. Undefined when there is none (or the answer is not JSON).
 */
export function earliestExpiry(answer: unknown, now: number): number | undefined {
  let earliest: number | undefined;
  let visited = 0;
  const stack: unknown[] = [answer];
  while (stack.length > 0 && visited++ < MAX_EXPIRY_NODES) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (typeof value === 'string') {
        if (!/expiry$/i.test(key) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) continue;
        // MediaWiki's expiries are to the second, and it still applies one during that second
        // (userinfo's blockinfo does): it ends at the second's end.
        const at = Date.parse(value) + 1_000;
        if (Number.isFinite(at) && at > now && (earliest === undefined || at < earliest)) earliest = at;
      } else if (typeof value === 'object' && value !== null) stack.push(value);
    }
  }
  return earliest;
}

/**
 * Renderings of pages' text: a parse of a page, and prop=revisions rendering or expanding its
 * content (`rvparse`, `rvexpandtemplates`), which change with the templates, modules and
 * messages they read, at the template's edit (the wiki renders on request).
 */
function rendersTemplates(query: PhpArray, modules: readonly string[]): boolean {
  if (modules[0] === 'parse') return true;
  return modules.includes('revisions') && (query.has('rvparse') || query.has('rvexpandtemplates'));
}

function carriesClock(query: PhpArray, modules: readonly string[]): boolean {
  // ApiMain: a boolean parameter is true when present, whatever its value.
  if (phpStringParam(query, 'curtimestamp') !== undefined) return true;
  return factsOf(modules).some((f) => f?.clock?.(query) === true);
}

function namespacesOf(query: PhpArray, param: string, fallback: number): number[] {
  const given = param ? phpStringParam(query, param) : undefined;
  if (given === undefined || given === '') return [fallback];
  // Every namespace: any change can alter it.
  if (given === '*') return [-3];
  return given.split('|').map(Number).filter(Number.isInteger);
}

function requestTitles(query: PhpArray, action: string): string[] {
  const out = split(phpTextParam(query, 'titles'));
  if (action === 'parse') out.push(...split(phpTextParam(query, 'page')));
  if (action === 'compare') out.push(...split(phpTextParam(query, 'fromtitle')), ...split(phpTextParam(query, 'totitle')));
  return out;
}

function requestPageIds(query: PhpArray): string[] {
  return [
    ...split(phpStringParam(query, 'pageids')),
    ...split(phpStringParam(query, 'pageid')),
    ...split(phpStringParam(query, 'fromid')),
    ...split(phpStringParam(query, 'toid')),
  ].filter((id) => /^\d+$/.test(id));
}

function addTitle(tags: Set<string>, text: unknown, ns: Namespaces): void {
  if (typeof text !== 'string') return;
  const t = titleKey(text, ns);
  if (t) tags.add(`p:${t.key}`);
}

function addId(tags: Set<string>, id: unknown): void {
  if (typeof id === 'number' && id > 0) tags.add(`i:${id}`);
}

/** The pages an answer names: query.pages/normalized/redirects/converted, parse, compare, entities. */
function collectAnswerPages(answer: unknown, tags: Set<string>, ns: Namespaces): void {
  if (typeof answer !== 'object' || answer === null) return;
  const a = answer as Record<string, unknown>;
  const q = a['query'] as Record<string, unknown> | undefined;
  if (q && typeof q === 'object') {
    // A revision the wiki does not have (deleted, or not yet) names no page: its undeletion
    // names the page, which this answer cannot know. Likewise a page id without a title.
    if (q['badrevids'] !== undefined) tags.add(ANY);
    for (const field of ['normalized', 'redirects', 'converted']) {
      const list = q[field];
      if (!Array.isArray(list)) continue;
      for (const r of list as { from?: unknown; to?: unknown }[]) {
        addTitle(tags, r?.from, ns);
        addTitle(tags, r?.to, ns);
      }
    }
    const pages = q['pages'];
    const items = Array.isArray(pages) ? pages : pages && typeof pages === 'object' ? Object.values(pages) : [];
    for (const p of items as { title?: unknown; pageid?: unknown }[]) {
      // A page id the wiki does not have (missing, without a title): its creation or undeletion
      // gives it a title, which names it in the change (the PURGE, the recentchanges row), not
      // this id; any change, then.
      if (typeof p?.title !== 'string') tags.add(ANY);
      addTitle(tags, p?.title, ns);
      addId(tags, p?.pageid);
    }
  }
  const parse = a['parse'] as { title?: unknown; pageid?: unknown } | undefined;
  if (parse && typeof parse === 'object') {
    addTitle(tags, parse.title, ns);
    addId(tags, parse.pageid);
  }
  const compare = a['compare'] as Record<string, unknown> | undefined;
  if (compare && typeof compare === 'object') {
    addTitle(tags, compare['fromtitle'], ns);
    addTitle(tags, compare['totitle'], ns);
    addId(tags, compare['fromid']);
    addId(tags, compare['toid']);
  }
}

/** The page(s) of an entity, by title or (MediaInfo) by page id; false when the id names none. */
function addEntity(tags: Set<string>, id: unknown, ns: Namespaces): boolean {
  if (typeof id !== 'string') return false;
  const pageId = entityPageId(id);
  if (pageId !== undefined) {
    tags.add(`i:${pageId}`);
    return true;
  }
  const titles = entityPageTitles(id, ns);
  for (const title of titles) addTitle(tags, title, ns);
  return titles.length > 0;
}

/**
 * The entities a Wikibase answer names: every key and `id` of `entities` (a redirect answers
 * under the id asked for with the target's data, `"redirects":{"from":"Q6","to":"Q1"}`: both),
 * the entity a claim GUID belongs to (wbgetclaims), the keys of wbformatentities' map. An
 * entity asked for by site and title that was not found (`"-1":{"site":…,"missing":""}`) is
 * any item's once a sitelink names that page: any item's sitelinks changing (SITELINKS).
 */
function collectAnswerEntities(answer: unknown, tags: Set<string>, ns: Namespaces, resolvesRedirects: boolean): void {
  if (typeof answer !== 'object' || answer === null) return;
  const a = answer as Record<string, unknown>;
  const entities = a['entities'];
  if (entities && typeof entities === 'object') {
    for (const [key, value] of Object.entries(entities as Record<string, unknown>)) {
      addEntity(tags, key, ns);
      if (typeof value !== 'object' || value === null) continue;
      const e = value as Record<string, unknown>;
      addEntity(tags, e['id'], ns);
      // With `site`, `title` is the client wiki's page the request named, not the entity's.
      if (e['site'] === undefined) {
        addTitle(tags, e['title'], ns);
        addId(tags, e['pageid']);
      }
      const r = e['redirects'] as { from?: unknown; to?: unknown } | undefined;
      if (r && typeof r === 'object') {
        addEntity(tags, r.from, ns);
        addEntity(tags, r.to, ns);
      }
      if (e['site'] !== undefined && e['missing'] !== undefined) {
        tags.add(SITELINKS);
        // Also the local page by that title: WikibaseMediaInfo finds a file's entity by its
        // File: page whatever the site (MediaInfoByLinkedTitleLookup), so the page coming to
        // exist (an upload, a move, an undeletion) makes the lookup find M<page id>.
        addTitle(tags, e['title'], ns);
      }
      // An entity asked for by id and found missing may be a redirect whose target is gone or
      // is itself a redirect: Wikibase resolves one level and answers the id asked for as
      // missing, naming no target (repo/includes/Api/GetEntities.php getEntityRevision, with
      // resolveRedirects false the second time). The target coming back (an undeletion, a bad
      // merge undone) names only the target: any change
      // (test/unit/a-missing-entity-may-be-a-broken-redirect.test.ts). A property cannot
      // redirect; a MediaInfo missing is its File: page without one, which that page's changes name.
      if (resolvesRedirects && e['site'] === undefined && e['missing'] !== undefined) {
        const id = typeof e['id'] === 'string' ? e['id'] : key;
        if (entityPageId(id) === undefined && mayBeRedirect(id)) tags.add(ANY);
      }
      if (showsStatements(e)) tags.add(DATATYPES);
    }
  }
  const claims = a['claims'];
  if (claims && typeof claims === 'object') {
    if (nonEmpty(claims)) tags.add(DATATYPES);
    for (const list of Object.values(claims as Record<string, unknown>))
      for (const claim of Array.isArray(list) ? list : []) if (typeof claim?.id === 'string') addEntity(tags, entityOfGuid(claim.id), ns);
  }
  const formatted = a['wbformatentities'];
  if (formatted && typeof formatted === 'object') for (const key of Object.keys(formatted)) addEntity(tags, key, ns);
}

/**
 * Whether an entity as an answer shows it holds statements: its own (`claims`; `statements` for
 * MediaInfo) or its lexeme forms' and senses'. Each shows its property's datatype (DATATYPES).
 */
function showsStatements(e: Record<string, unknown>): boolean {
  if (nonEmpty(e['claims']) || nonEmpty(e['statements'])) return true;
  for (const part of ['forms', 'senses']) {
    const list = e[part];
    if (Array.isArray(list) && list.some((sub) => typeof sub === 'object' && sub !== null && nonEmpty((sub as Record<string, unknown>)['claims']))) return true;
  }
  return false;
}

function nonEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value !== 'object' || value === null) return false;
  for (const _ in value) return true;
  return false;
}

/** The body of a json or JSONP answer as JSON, or undefined (another format, or unreadable). */
export function answerJson(body: Buffer, contentType: string | undefined): unknown {
  const mime = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  let text: string;
  if (mime === 'application/json') text = body.toString('utf8');
  else if (mime === 'text/javascript') {
    // ApiFormatJson: `/**/cb(…)`.
    const s = body.toString('utf8');
    const open = s.indexOf('(');
    if (!s.startsWith('/**/') || open === -1 || !s.endsWith(')')) return undefined;
    text = s.slice(open + 1, -1);
  } else return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
