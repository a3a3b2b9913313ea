/**
 * A change, as the invalidation sees it: the tags it invalidates (dependencies.ts's vocabulary)
 * and the users whose sessions it ends, from a CDN PURGE or a recentchanges row.
 *
 * Every change invalidates `*` (lists any change can alter), the namespace of each page it names
 * (`n:<ns>`), and the pages themselves, by title and by id. A recentchanges row names more than
 * its title (research notes §3): a move its target (`logparams.target_title`), a merge its
 * destination (`dest_title`), a move of protection its old title (`oldtitle_title`). A rights or
 * block log row ends the sessions of the user it names (User:Name): their cached answers were
 * made with rights they may no longer have. A row hidden from anonymous readers (`actionhidden`)
 * names nothing: only `*`.
 */
import { ANY } from './dependencies.js';
import { DEFAULT_NAMESPACES, type Namespaces, titleKey } from './titles.js';

/** purge: a CDN PURGE; follower: a recentchanges row; write: a write that passed through the gateway. */
export type ChangeSource = 'purge' | 'follower' | 'write';

export interface Change {
  readonly source: ChangeSource;
  /** edit, new, log, categorize, external (recentchanges' rc_type), or purge. */
  readonly type: string;
  readonly tags: readonly string[];
  /** Users (names, spaces not underscores) whose sessions' entries go. */
  readonly users: readonly string[];
  /** When the change happened (ms since the epoch, the wiki's clock), when known. */
  readonly at: number | undefined;
}

/** A recentchanges row (formatversion=2, rcprop=title|ids|timestamp|loginfo). */
export interface RecentChangeRow {
  readonly type: string;
  readonly ns?: number;
  readonly title?: string;
  readonly pageid?: number;
  readonly revid?: number;
  readonly rcid: number;
  readonly timestamp: string;
  readonly logtype?: string;
  readonly logaction?: string;
  readonly logparams?: Record<string, unknown>;
  readonly actionhidden?: boolean;
}

const USER_LOG_TYPES = new Set(['rights', 'block']);

export function changeFromRow(row: RecentChangeRow, namespaces: Namespaces = DEFAULT_NAMESPACES): Change {
  const tags = new Set<string>([ANY]);
  const users: string[] = [];
  const addTitle = (text: unknown, ns: unknown) => {
    if (typeof text !== 'string') return;
    const t = titleKey(text, namespaces);
    if (!t) return;
    tags.add(`p:${t.key}`);
    tags.add(`n:${typeof ns === 'number' ? ns : t.ns}`);
  };
  if (!row.actionhidden) {
    addTitle(row.title, row.ns);
    if (typeof row.pageid === 'number' && row.pageid > 0) tags.add(`i:${row.pageid}`);
    const p = row.logparams ?? {};
    addTitle(p['target_title'], p['target_ns']);
    addTitle(p['dest_title'], p['dest_ns']);
    addTitle(p['oldtitle_title'], p['oldtitle_ns']);
    if (row.logtype && USER_LOG_TYPES.has(row.logtype) && typeof row.title === 'string') {
      const t = titleKey(row.title, namespaces);
      if (t && t.ns === 2) users.push(t.key.slice(t.key.indexOf(':') + 1));
    }
  }
  const at = Date.parse(row.timestamp);
  return {
    source: 'follower',
    type: row.type === 'log' && row.logtype ? `log/${row.logtype}` : row.type,
    tags: [...tags],
    users,
    at: Number.isFinite(at) ? at : undefined,
  };
}

/** A PURGE of a page's URL (purge-url.ts): the page changed in some way. */
export function changeFromPurge(title: string, namespaces: Namespaces = DEFAULT_NAMESPACES): Change {
  const tags = new Set<string>([ANY]);
  const t = titleKey(title, namespaces);
  if (t) {
    tags.add(`p:${t.key}`);
    tags.add(`n:${t.ns}`);
  }
  return { source: 'purge', type: 'purge', tags: [...tags], users: [], at: undefined };
}

/**
 * The write modules of MediaWiki 1.39's API and the parameters that name the pages they change
 * (ApiEditPage title/pageid, ApiMove from/to/fromid, ApiDelete, ApiUndelete, ApiProtect,
 * ApiRollback, ApiUpload filename, ApiMergeHistory, ApiPurge titles, …).
 */
const WRITES: Readonly<Record<string, readonly string[]>> = {
  edit: ['title'],
  move: ['from', 'to'],
  delete: ['title'],
  undelete: ['title'],
  protect: ['title'],
  rollback: ['title'],
  upload: ['filename'],
  filerevert: ['filename'],
  mergehistory: ['from', 'to'],
  changecontentmodel: ['title'],
  setpagelanguage: ['title'],
  purge: ['titles'],
  revisiondelete: ['target'],
  import: [],
  managetags: [],
  tag: [],
};
const FILE_PARAMS = new Set(['filename']);

/** Every parameter changeFromWrite reads: a posted form is searched for these (php/php-post.ts). */
export const WRITE_PARAMETERS: ReadonlySet<string> = new Set(['action', 'pageid', 'fromid', ...Object.values(WRITES).flat()]);

/**
 * A successful write that passed through the gateway: its pages changed. Read-your-writes even
 * where MediaWiki sends no PURGE (protect, merge) and before the follower's next poll. `params`
 * are the request's parameters as PHP reads them ($_GET then $_POST), by name; undefined when
 * the request is not a write module.
 */
export function changeFromWrite(action: string, params: (name: string) => string | undefined, namespaces: Namespaces = DEFAULT_NAMESPACES): Change | undefined {
  const names = WRITES[action];
  if (!names) return undefined;
  const tags = new Set<string>([ANY]);
  for (const name of names) {
    for (const text of (params(name) ?? '').split('|')) {
      if (!text) continue;
      const t = titleKey(FILE_PARAMS.has(name) ? `File:${text}` : text, namespaces);
      if (!t) continue;
      tags.add(`p:${t.key}`);
      tags.add(`n:${t.ns}`);
    }
  }
  for (const id of (params('pageid') ?? params('fromid') ?? '').split('|')) if (/^\d+$/.test(id)) tags.add(`i:${id}`);
  return { source: 'write', type: action, tags: [...tags], users: [], at: undefined };
}

/**
 * A successful write whose form could not be read (too large to be held, streamed on as it came):
 * its module and pages are unknown. Every list any change alters (`*`) and every namespace's
 * lists go; the pages' own answers are left to the wiki's PURGE and the follower.
 */
export function changeFromUnreadWrite(namespaces: Namespaces = DEFAULT_NAMESPACES): Change {
  const tags = new Set<string>([ANY, 'n:0']);
  for (const ns of namespaces.names.keys()) if (ns >= 0) tags.add(`n:${ns}`);
  return { source: 'write', type: 'unknown', tags: [...tags], users: [], at: undefined };
}
