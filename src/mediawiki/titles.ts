/**
 * Title keys: one spelling per page, so that what an answer depends on and what a change names
 * meet. MediaWiki's own normalisation (MediaWikiTitleCodec::splitTitleString) needs the wiki's
 * namespace names and settings; it is not reproduced. Every side is put through the same cheap
 * function instead, and both sides mostly carry the canonical text already: an answer's
 * `normalized[].to`, `redirects[]` and `pages[].title`, a recentchanges row's `title`, a PURGE
 * URL's prefixed DB key. The function only has to be consistent, and idempotent on canonical text:
 *
 * - Unicode NFC (WebRequest::getGPCVal cleans up to NFC);
 * - `_` and runs of whitespace are one space, trimmed (splitTitleString :381-386);
 * - a leading `:` forces the main namespace (:398-402), a `#fragment` is cut (:481-487);
 * - the namespace prefix of a known namespace (case-insensitive, aliases such as Image → File,
 *   Project → the wiki's meta namespace: Namespaces) is written as the wiki writes it;
 * - the first letter of the page name is upper case ($wgCapitalLinks, true by default; when a
 *   wiki turns it off both sides are uppercased alike, which still matches).
 */

/** Namespace names of a wiki: number → canonical name, plus every name and alias → number. */
export interface Namespaces {
  readonly names: ReadonlyMap<number, string>;
  /** Lower-cased names and aliases, with spaces, → number. */
  readonly byName: ReadonlyMap<string, number>;
  /**
   * Wikibase entity types (`item`, `property`, `lexeme`) → the namespace their pages are in, from
   * siteinfo's `defaultcontentmodel` (`wikibase-item` …; Wikibase sets $wgNamespaceContentModels
   * for each entity namespace, repo/includes/RepoHooks.php onSetupAfterCache). Undefined until
   * learned from the wiki (mediawiki/entities.ts then guesses both layouts).
   */
  readonly entities?: ReadonlyMap<string, number>;
}

/** MediaWiki 1.39's canonical English namespaces (NamespaceInfo::$canonicalNamespaces) and its default aliases. */
const CANONICAL: readonly (readonly [number, string])[] = [
  [-2, 'Media'],
  [-1, 'Special'],
  [1, 'Talk'],
  [2, 'User'],
  [3, 'User talk'],
  [4, 'Project'],
  [5, 'Project talk'],
  [6, 'File'],
  [7, 'File talk'],
  [8, 'MediaWiki'],
  [9, 'MediaWiki talk'],
  [10, 'Template'],
  [11, 'Template talk'],
  [12, 'Help'],
  [13, 'Help talk'],
  [14, 'Category'],
  [15, 'Category talk'],
];
const DEFAULT_ALIASES: readonly (readonly [string, number])[] = [
  ['image', 6],
  ['image talk', 7],
];

export const DEFAULT_NAMESPACES: Namespaces = namespacesFrom(CANONICAL, DEFAULT_ALIASES);

/**
 * A wiki's namespaces from `meta=siteinfo&siprop=namespaces|namespacealiases` (formatversion 2):
 * its localised names, canonical names and aliases.
 */
export function namespacesFromSiteinfo(query: {
  namespaces?: Record<string, { id: number; name: string; canonical?: string; defaultcontentmodel?: string }>;
  namespacealiases?: { id: number; alias: string }[];
}): Namespaces {
  const names: [number, string][] = [];
  const aliases: (readonly [string, number])[] = [...DEFAULT_ALIASES];
  const entities = new Map<string, number>();
  for (const ns of Object.values(query.namespaces ?? {})) {
    const model = /^wikibase-(\w+)$/.exec(ns.defaultcontentmodel ?? '');
    if (model && !entities.has(model[1]!)) entities.set(model[1]!, ns.id);
    if (ns.id === 0) continue;
    names.push([ns.id, ns.name]);
    if (ns.canonical) aliases.push([ns.canonical.toLowerCase(), ns.id]);
  }
  for (const a of query.namespacealiases ?? []) aliases.push([a.alias.toLowerCase().replace(/_/g, ' '), a.id]);
  return { ...namespacesFrom(names, aliases), entities };
}

function namespacesFrom(names: readonly (readonly [number, string])[], aliases: readonly (readonly [string, number])[]): Namespaces {
  const byName = new Map<string, number>();
  for (const [id, name] of names) byName.set(name.toLowerCase(), id);
  for (const [alias, id] of aliases) if (!byName.has(alias)) byName.set(alias, id);
  return { names: new Map(names), byName };
}

const SPACES = /[\s_\u00a0\u1680\u180e\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;
const BIDI = /[\u200e\u200f\u202a-\u202e]/g;

/** A title's key and namespace, or undefined for what is not a page title (empty, a fragment only). */
export function titleKey(text: string, namespaces: Namespaces = DEFAULT_NAMESPACES): { key: string; ns: number } | undefined {
  let t = text.normalize('NFC').replace(BIDI, '');
  const hash = t.indexOf('#');
  if (hash !== -1) t = t.slice(0, hash);
  t = t.replace(SPACES, ' ').trim();
  let ns = 0;
  let prefix = '';
  if (t.startsWith(':')) t = t.slice(1).trim();
  else {
    const colon = t.indexOf(':');
    if (colon > 0) {
      const id = namespaces.byName.get(t.slice(0, colon).trim().toLowerCase());
      if (id !== undefined) {
        ns = id;
        prefix = `${namespaces.names.get(id) ?? t.slice(0, colon).trim()}:`;
        t = t.slice(colon + 1).trim();
      }
    }
  }
  if (t === '') return undefined;
  return { key: `${prefix}${upperFirst(t)}`, ns };
}

/**
 * The other page of a subject/talk pair (`Foo` and `Talk:Foo`, `User:X` and `User talk:X`): its
 * key, or undefined (Special and Media have none). A page coming to exist, ceasing to or being
 * renamed alters answers about the other (`prop=info&inprop=talkid|subjectid`): MediaWiki purges
 * both pages' URLs then, while recentchanges names the one page only (policy/changes.ts addPage).
 */
export function pairedKey(t: { readonly key: string; readonly ns: number }, namespaces: Namespaces = DEFAULT_NAMESPACES): string | undefined {
  if (t.ns < 0) return undefined;
  const pair = t.ns % 2 === 0 ? t.ns + 1 : t.ns - 1;
  const text = t.ns === 0 ? t.key : t.key.slice(t.key.indexOf(':') + 1);
  if (pair === 0) return text;
  const name = namespaces.names.get(pair);
  return name === undefined ? undefined : `${name}:${text}`;
}

/** Language::ucfirst for a code point: full case mapping (ß → SS), as mb_strtoupper does. */
function upperFirst(s: string): string {
  const first = String.fromCodePoint(s.codePointAt(0)!);
  return first.toUpperCase() + s.slice(first.length);
}
