/**
 * What a cached answer depends on, as tags a change can name (the invalidation's vocabulary):
 *
 *   p:<title key>   the page of that title (titles.ts titleKey)
 *   i:<page id>     the page of that id (a page keeps its id when it moves)
 *   n:<namespace>   any page of that namespace being created, changed, deleted or moved
 *   *               any change at all (the safe default: lists any change can alter, modules
 *                   whose dependencies cannot be bounded, answers that could not be read)
 *
 * Modules are sorted by what they read (/work/notes research, from MediaWiki 1.39's modules):
 * - page modules (prop=info, revisions, links, …; parse of a page; compare) depend on the pages
 *   named in the request and, above all, on those the answer lists (`normalized`, `redirects`,
 *   `pages`: the canonical titles a change will name);
 * - lists within one namespace (allpages, prefixsearch, allimages, allmessages) depend on that
 *   namespace (allredirects is not one: its `arnamespace` is the redirects' targets', while a
 *   change names the redirect page's);
 * - every other list (recentchanges, logevents, categorymembers, backlinks, search, users, …)
 *   and every unknown module depends on any change;
 * - configuration (siteinfo but its statistics, paraminfo, help, filerepoinfo, languageinfo,
 *   wbavailablebadges) on nothing: its TTL alone bounds it.
 * A parse of a page depends on its templates too (a template edit re-renders it, and only the
 * job that follows purges the page): changes in the Template, Module and MediaWiki namespaces.
 * An operator's module rule (`dependsOn`) overrides the table.
 *
 * Answers that carry the server's clock (`curtimestamp=1`, siteinfo's `general.time`) are
 * flagged: their TTL is capped to seconds whatever the rest (bot frameworks read the wiki's
 * clock from them).
 */
import type { PhpArray } from '../mediawiki/php-input.js';
import { phpStringParam } from '../mediawiki/php-input.js';
import { DEFAULT_NAMESPACES, type Namespaces, titleKey } from '../mediawiki/titles.js';

export type DependencyClass = 'pages' | 'namespace' | 'any' | 'nothing';

export const ANY = '*';

/** Page modules that read a page's rows in the links tables (and page_props), which jobs update. */
const LINKS_TABLE_PROPS = ['categories', 'templates', 'links', 'images', 'extlinks', 'iwlinks', 'langlinks', 'pageprops'];

/** Query submodules (list/prop/meta/generator) by what they depend on. */
const PAGE_MODULES = new Set([
  'info',
  'revisions',
  ...LINKS_TABLE_PROPS,
  'imageinfo',
  'contributors',
  'pageimages',
  'pageterms',
]);

/** Namespace-scoped lists: the parameter naming the namespace(s), and the default. */
const NAMESPACE_LISTS: Readonly<Record<string, { readonly param: string; readonly fallback: number }>> = {
  allpages: { param: 'apnamespace', fallback: 0 },
  prefixsearch: { param: 'psnamespace', fallback: 0 },
  allimages: { param: '', fallback: 6 },
  allmessages: { param: '', fallback: 8 },
};

const CONFIG_MODULES = new Set(['siteinfo', 'filerepoinfo', 'languageinfo']);

/**
 * Modules that read the links tables (categorylinks, templatelinks, pagelinks, imagelinks,
 * externallinks, iwlinks, langlinks, page_props) or the parser cache. MediaWiki updates those
 * for the pages that transclude an edited template in jobs (RefreshLinksJob, HTMLCacheUpdateJob)
 * run whenever the job queue gets to them, with no recentchanges row ($wgRCWatchCategoryMembership
 * is off by default) and no PURGE of an api.php URL: nothing the gateway could follow.
 */
const JOB_UPDATED_MODULES = new Set([
  ...LINKS_TABLE_PROPS,
  'categorymembers',
  'backlinks',
  'embeddedin',
  'imageusage',
  'linkshere',
  'transcludedin',
  'fileusage',
  'alllinks',
  'alltransclusions',
  'allfileusages',
  'allcategories',
  'pageswithprop',
  'exturlusage',
  'langbacklinks',
  'iwbacklinks',
  // Counts and indexes the same jobs (or the search index's) keep: category sizes, extensions'
  // extracts and page images, search, the cached special pages.
  'categoryinfo',
  'extracts',
  'pageimages',
  'search',
  'querypage',
]);

/**
 * Whether an answer reads what MediaWiki's jobs update without a change signal (JOB_UPDATED_MODULES,
 * a parse of a stored page): such an answer keeps the short TTL defaults even while the change
 * follower vouches for the rest (a template edit reaches it within the short TTL of the job run).
 */
export function updatedByJobs(modules: readonly string[], query: PhpArray): boolean {
  if (modules[0] === 'parse') return !(query.has('text') || query.has('summary'));
  return modules.some((m) => JOB_UPDATED_MODULES.has(m));
}

/** Actions (besides query) by what they depend on. */
const CONFIG_ACTIONS = new Set(['help', 'paraminfo', 'rsd', 'wbavailablebadges']);

/** Template, Module (Scribunto) and MediaWiki: what a rendering transcludes or reads. */
const RENDERING_NAMESPACES = [10, 828, 8];

/** Wikibase entity id prefixes → the namespace of their pages on a default repo (Item:Q42). */
const ENTITY_NAMESPACES: Readonly<Record<string, string>> = { Q: 'Item', P: 'Property', L: 'Lexeme' };

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
  const classes = input.override ? [input.override] : modules.map((m, i) => classOf(m, i === 0 && modules.length > 1, query));
  for (const c of classes) {
    if (c === 'any') tags.add(ANY);
  }
  if (classes.includes('namespace')) {
    const generator = phpStringParam(query, 'generator');
    for (const m of modules) {
      const list = NAMESPACE_LISTS[m];
      if (!list) continue;
      // As a generator its parameters take a `g` (ApiQueryGeneratorBase::encodeParamName).
      const param = list.param && m === generator ? `g${list.param}` : list.param;
      for (const n of namespacesOf(query, param, list.fallback)) tags.add(n === -3 ? ANY : `n:${n}`);
    }
  }
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
  const props = (name: string) => (phpStringParam(query, name) ?? '').split('|');
  return modules.some(
    (m) =>
      m === 'blocks' ||
      m === 'protectedtitles' ||
      m === 'globalblocks' ||
      (m === 'info' && readsRestrictions(query)) ||
      (m === 'allpages' && (query.has('apprtype') || query.has('gapprtype'))) ||
      (m === 'users' && props('usprop').includes('blockinfo')) ||
      (m === 'allusers' && props('auprop').includes('blockinfo')) ||
      (m === 'userinfo' && props('uiprop').includes('blockinfo')),
  );
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

/** Parameters with which action=query itself answers about pages (ApiPageSet), whatever its submodules. */
const PAGE_SET_PARAMETERS = ['titles', 'pageids', 'revids'];

function classOf(module: string, isQueryItself: boolean, query: PhpArray): DependencyClass {
  // action=query: its submodules decide, but for the pages the request names, which its own
  // `pages` (missing or not, `export`, `redirects`) is about, with or without submodules.
  if (isQueryItself || module === 'query') return PAGE_SET_PARAMETERS.some((p) => query.has(p)) ? 'pages' : 'nothing';
  if (module === 'info' && readsRestrictions(query)) return 'any';
  if (PAGE_MODULES.has(module)) return 'pages';
  if (module === 'allpages' && (query.has('apprtype') || query.has('gapprtype'))) return 'any';
  if (NAMESPACE_LISTS[module]) return 'namespace';
  if (CONFIG_MODULES.has(module)) return module === 'siteinfo' && siteinfoCounts(query) ? 'any' : 'nothing';
  if (CONFIG_ACTIONS.has(module)) return 'nothing';
  if (module === 'parse') return query.has('text') || query.has('summary') ? 'any' : 'pages';
  if (module === 'compare' || module === 'wbgetentities') return 'pages';
  return 'any';
}

function siprops(query: PhpArray): string[] {
  return (phpStringParam(query, 'siprop') ?? 'general').split('|');
}

/** siteinfo's data rather than configuration: its statistics, and the members counted per group (a rights change alters them). */
function siteinfoCounts(query: PhpArray): boolean {
  const props = siprops(query);
  return props.includes('statistics') || (props.includes('usergroups') && query.has('sinumberingroup'));
}

/**
 * prop=info reading a page's restrictions: its protection (`inprop=protection`), which a
 * cascading protection of another page (the one that transcludes it) sets with no change naming
 * this page, and what a user may do with it (`intestactions`), which also depends on those.
 */
function readsRestrictions(query: PhpArray): boolean {
  const inprop = phpStringParam(query, 'inprop') ?? '';
  return inprop.split('|').includes('protection') || query.has('intestactions');
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
  const cur = phpStringParam(query, 'curtimestamp');
  // ApiMain: a boolean parameter is true when present, whatever its value.
  if (cur !== undefined) return true;
  return modules.includes('siteinfo') && siprops(query).includes('general');
}

function namespacesOf(query: PhpArray, param: string, fallback: number): number[] {
  const given = param ? phpStringParam(query, param) : undefined;
  if (given === undefined || given === '') return [fallback];
  // Every namespace: any change can alter it.
  if (given === '*') return [-3];
  return given.split('|').map(Number).filter(Number.isInteger);
}

function split(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  return value.startsWith('\x1f') ? value.slice(1).split('\x1f') : value.split('|');
}

function requestTitles(query: PhpArray, action: string): string[] {
  const out = split(phpStringParam(query, 'titles'));
  if (action === 'parse') out.push(...split(phpStringParam(query, 'page')));
  if (action === 'compare') out.push(...split(phpStringParam(query, 'fromtitle')), ...split(phpStringParam(query, 'totitle')));
  if (action === 'wbgetentities') {
    for (const id of split(phpStringParam(query, 'ids'))) {
      const prefix = ENTITY_NAMESPACES[id.charAt(0).toUpperCase()];
      // A wiki may keep items in the main namespace (Wikidata): both spellings.
      if (prefix) out.push(`${prefix}:${id}`, id);
    }
  }
  return out;
}

function requestPageIds(query: PhpArray): string[] {
  return [...split(phpStringParam(query, 'pageids')), ...split(phpStringParam(query, 'pageid')), ...split(phpStringParam(query, 'fromid')), ...split(phpStringParam(query, 'toid'))].filter(
    (id) => /^\d+$/.test(id),
  );
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
  const entities = a['entities'];
  if (entities && typeof entities === 'object')
    for (const e of Object.values(entities) as { title?: unknown; pageid?: unknown }[]) {
      addTitle(tags, e?.title, ns);
      addId(tags, e?.pageid);
    }
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
