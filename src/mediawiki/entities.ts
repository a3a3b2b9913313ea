/**
 * Wikibase entities and their pages. An entity's page is `<namespace>:<id>` in the namespace the
 * wiki keeps its type in (`Item:Q42` on a repository with Wikibase's example settings, `Q42` on
 * Wikidata, where items live in the main namespace): learned from siteinfo (titles.ts
 * Namespaces.entities), never a fixed table. Until the gateway has learned them, both layouts
 * are assumed: an id stands for `Item:Q1` and `Q1` alike, which over-invalidates, never under.
 * A MediaInfo id (`M123`) names its page by id instead (entityPageId).
 */
import type { Namespaces } from './titles.js';

/** Entity types by id prefix (Wikibase's EntityIdParser patterns: Q42, P31, L7). */
const TYPE_OF_PREFIX: Readonly<Record<string, string>> = { Q: 'item', P: 'property', L: 'lexeme' };
const PREFIX_OF_TYPE: Readonly<Record<string, string>> = { item: 'Q', property: 'P', lexeme: 'L' };
/** Wikibase's example settings: the guess until siteinfo is known. */
const GUESSED_NAMESPACE_NAMES: Readonly<Record<string, string>> = { item: 'Item', property: 'Property', lexeme: 'Lexeme' };

const ENTITY_ID = /^([QPL])([1-9]\d{0,9})$/i;

/** An entity id's canonical form and type (`q42` → Q42, item), or undefined when it is not one. */
export function parseEntityId(text: string): { readonly id: string; readonly type: string } | undefined {
  const m = ENTITY_ID.exec(text.trim());
  if (!m) return undefined;
  const prefix = m[1]!.toUpperCase();
  return { id: `${prefix}${m[2]}`, type: TYPE_OF_PREFIX[prefix]! };
}

/**
 * The id a legacy entity-id value names (`{"entity-type":"item","numeric-id":2}` → Q2, as
 * Wikibase DataModel's LegacyIdInterpreter::newIdFromTypeAndNumber reads it; lexemes as
 * WikibaseLexeme numbers them), or undefined for a type or number it cannot be read from (forms
 * and senses have no number of their own: their ids are strings).
 */
export function entityIdOfNumber(type: unknown, number: unknown): string | undefined {
  const prefix = typeof type === 'string' && Object.hasOwn(PREFIX_OF_TYPE, type) ? PREFIX_OF_TYPE[type] : undefined;
  const digits = typeof number === 'number' ? String(number) : typeof number === 'string' ? number.trim() : '';
  if (prefix === undefined || !/^[1-9]\d{0,9}$/.test(digits)) return undefined;
  return `${prefix}${digits}`;
}

/**
 * A MediaInfo id (WikibaseMediaInfo, `M123`) names the entity in the `mediainfo` slot of the page
 * whose id is its number, a File: page (MediaInfoHandler::getTitleForId: Title::newFromID;
 * getIdForTitle: 'M' . the page's id): a page named by id, whatever its title.
 */
const PAGE_ID_ENTITY_ID = /^M([1-9]\d{0,9})$/i;

/** The page id an entity id names (`M123` → 123), or undefined for an entity named by title or no entity. */
export function entityPageId(text: string): number | undefined {
  const m = PAGE_ID_ENTITY_ID.exec(text.trim());
  return m ? Number(m[1]) : undefined;
}

/**
 * Whether an entity id may name a redirect, whose label and data are its target's: any but a
 * property's (Wikibase's EntityHandler::supportsRedirects is its content class having
 * newFromRedirect, which ItemContent and LexemeContent have and PropertyContent has not; a
 * MediaInfo's File: page may itself redirect). Undefined or unreadable ids may.
 */
export function mayBeRedirect(text: string): boolean {
  return parseEntityId(text)?.type !== 'property';
}

/** A lexeme's form or sense (WikibaseLexeme FormId, SenseId: `L1-F2`, `L1-S1`) is kept on the lexeme's page. */
const SUB_ENTITY_ID = /^(L[1-9]\d{0,9})-[FS][1-9]\d{0,9}$/i;

/**
 * The entity type whose page keeps an entity (`Q42` → item, `L1-F2` → lexeme: a form's and a
 * sense's is their lexeme's), or undefined for an id of no type read here (a MediaInfo `M5` names
 * its page by id: entityPageId).
 */
export function holderTypeOf(text: string): string | undefined {
  return parseEntityId(SUB_ENTITY_ID.exec(text.trim())?.[1] ?? text)?.type;
}

/** The title(s) of an entity's page: one when the wiki's layout is known, both layouts until then. */
export function entityPageTitles(text: string, namespaces: Namespaces): string[] {
  const entity = parseEntityId(SUB_ENTITY_ID.exec(text.trim())?.[1] ?? text);
  if (!entity) return [];
  const ns = namespaces.entities?.get(entity.type);
  if (ns === undefined) {
    const guess = GUESSED_NAMESPACE_NAMES[entity.type]!;
    return namespaces.entities === undefined || namespaces.entities.size === 0 ? [`${guess}:${entity.id}`, entity.id] : [];
  }
  if (ns === 0) return [entity.id];
  const name = namespaces.names.get(ns);
  return name === undefined ? [] : [`${name}:${entity.id}`];
}

/**
 * The entity type whose page a title is (`Item:Q42` → item), or undefined for any other page (a
 * wikitext page of the main namespace on Wikidata's layout is not an entity's).
 */
export function entityTypeOfPage(t: { readonly key: string; readonly ns: number }, namespaces: Namespaces): string | undefined {
  const name = t.ns === 0 ? t.key : t.key.slice(t.key.indexOf(':') + 1);
  const known = namespaces.entities;
  if (known === undefined || known.size === 0) {
    // Not learned yet: Wikibase's example namespaces (unknown to titleKey, so still in the key) or the main namespace.
    const m = /^(?:(Item|Property|Lexeme):)?([QPL][1-9]\d*)$/.exec(t.key);
    return m && t.ns === 0 ? parseEntityId(m[2]!)?.type : undefined;
  }
  const entity = parseEntityId(name);
  if (!entity || PREFIX_OF_TYPE[entity.type] !== name.charAt(0)) return undefined;
  return known.get(entity.type) === t.ns ? entity.type : undefined;
}

/**
 * Sub-entity types and the type of the entity whose page keeps them: a lexeme's forms and senses
 * (WikibaseLexeme.entitytypes.php: `sub-entity-types` of `lexeme`) have no page of their own and
 * change only as edits of their lexeme's page, the one change signal that can name them.
 */
const HOLDER_OF_SUB_ENTITY_TYPE: Readonly<Record<string, string>> = { form: 'lexeme', sense: 'lexeme' };

/**
 * The tag of "some entity of this type changed its terms or came or went" (searches depend on it;
 * a change of an entity's page names it). A sub-entity type's is its holder's: only a change of
 * the holder's page can name it (a search of forms goes when any lexeme changes).
 */
export function entityTypeTag(type: string): string {
  return `t:${Object.hasOwn(HOLDER_OF_SUB_ENTITY_TYPE, type) ? HOLDER_OF_SUB_ENTITY_TYPE[type] : type}`;
}
