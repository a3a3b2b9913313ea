/**
 * A change, as the invalidation sees it: the tags it invalidates (dependencies.ts's vocabulary)
 * and the users whose sessions it ends, from a CDN PURGE or a recentchanges row.
 *
 * A confirmed change (a recentchanges row, a write that passed through the gateway) invalidates
 * `*` (lists any change can alter), the namespace of each page it names (`n:<ns>`), the entity
 * type of each entity page it names (`t:<type>`: searches), and the pages themselves, by title
 * and by id. A CDN PURGE alone names only its page: MediaWiki sends one for an anonymous
 * `action=purge` too (ApiPurge needs no token), so a PURGE is not taken for a change of lists
 * until the wiki confirms the page changed (invalidation/purge-confirmation.ts); nor is a write whose
 * answer says it changed nothing (a null edit). A recentchanges row names more than
 * its title (MoveLogFormatter, MergeLogFormatter, ProtectLogFormatter: formatParametersForApi()): a move its target (`logparams.target_title`), a merge its
 * destination (`dest_title`), a move of protection its old title (`oldtitle_title`). A rights or
 * block log row ends the sessions of the user it names (User:Name): their cached answers were
 * made with rights they may no longer have. A row hidden from anonymous readers (`actionhidden`)
 * names nothing: only `*`.
 *
 * A change known to touch an entity's statements alone (a Wikibase statement module wrote it:
 * statementsOnlyComment, modules.ts WriteFacts.statementsOnly) does not name its entity type:
 * searches match labels, aliases and ids and show labels and descriptions (Wikibase REL1_39's
 * term store, repo/includes/Api/SearchEntities.php and QuerySearchEntities.php over
 * EntitySearchHelper), and a site-and-title lookup reads sitelinks, none of which a statement
 * edit changes. One known to touch an item's sitelinks alone (sitelinksOnlyComment: a sitelink
 * set, a client wiki's page moved or deleted, modules.ts WriteFacts.sitelinksOnly) names the
 * lookups (dependencies.ts SITELINKS) and not its entity type: searches show no sitelink.
 * Everything else about it (`*`, its namespace, its page) it names as any change.
 */
import { ANY, DATATYPES, SITELINKS } from './dependencies.js';
import { DEFAULT_NAMESPACES, type Namespaces, pairedKey, titleKey } from '../mediawiki/titles.js';
import { entityPageId, entityPageTitles, entityTypeOfPage, entityTypeTag } from '../mediawiki/entities.js';
import { type WriteFacts, writeFacts } from '../mediawiki/modules.js';
import { entityOfGuid } from '../mediawiki/wikibase-params.js';

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
  /**
   * Pages whose lists (their namespace, entity type, any change) go only once the wiki confirms
   * they changed (invalidation/purge-confirmation.ts), as for a PURGE: a write whose answer cannot
   * say whether it saved anything (modules.ts WriteFacts.unproven). Its `tags` name the pages alone.
   */
  readonly confirm?: readonly string[];
}

/** A recentchanges row (formatversion=2, rcprop=title|ids|timestamp|loginfo|comment|tags). */
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
  /** The edit summary; absent when hidden from anonymous readers (`commenthidden`). */
  readonly comment?: string;
  readonly commenthidden?: boolean;
  /** Its change tags (rcprop=tags): a revert's say that its summary was typed, not Wikibase's. */
  readonly tags?: readonly string[];
}

const USER_LOG_TYPES = new Set(['rights', 'block']);

export function changeFromRow(row: RecentChangeRow, namespaces: Namespaces = DEFAULT_NAMESPACES): Change {
  const tags = new Set<string>([ANY]);
  const users: string[] = [];
  // An edit (not a creation, nor a log entry) whose summary says a statement module wrote it.
  const onlyStatements = row.type === 'edit' && row.commenthidden !== true && statementsOnlyComment(row.comment, row.tags);
  // An edit whose summary says it changed sitelinks alone.
  const onlySitelinks = row.type === 'edit' && row.commenthidden !== true && sitelinksOnlyComment(row.comment, row.tags);
  // A deletion or a restoration: the page's existence changed (not `revision` or `event`, which
  // hide a revision or a log entry of a page that stays); revisions imported into it
  // (Special:Import and action=import write the log row; importDump.php writes none), whose
  // newest may be another datatype's and which no edit row follows; or, for a property, a
  // revision no Wikibase module made (mayChangeDatatype). A history merge moves only revisions
  // older than the destination's oldest (MergeHistory::getMaxTimestamp): its newest stays.
  const datatypes =
    (row.type === 'log' && row.logtype === 'delete' && (row.logaction === 'delete' || row.logaction === 'restore')) ||
    (row.type === 'log' && row.logtype === 'import') ||
    (row.type === 'edit' && mayChangeDatatype(row.commenthidden === true ? undefined : row.comment, row.tags));
  // A creation, or a log entry (a deletion, a restoration, a move, an import...): the pair's too.
  const paired = row.type === 'new' || row.type === 'log';
  const addTitle = (text: unknown, ns: unknown) => {
    if (typeof text !== 'string') return;
    const t = titleKey(text, namespaces);
    if (!t) return;
    addPage(tags, t, namespaces, paired);
    addClasses(tags, t, namespaces, ns, onlyStatements, onlySitelinks);
    if (datatypes) addExistence(tags, t, namespaces);
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

/**
 * A PURGE of a page's URL (purge-url.ts): the page is to be fetched again. Only the page's own
 * answers go: a PURGE is no proof that anything changed (anyone may make the wiki send one with
 * a tokenless `action=purge`), so lists wait for the change to be confirmed (changeConfirmed).
 * Not its subject or talk page's: the wiki sends their PURGE too when the change concerns them
 * (addPage). `paired`: an operator's purge by title (admin-purge-request.ts), which takes both.
 */
export function changeFromPurge(title: string, namespaces: Namespaces = DEFAULT_NAMESPACES, paired = false): Change {
  const tags = new Set<string>();
  const t = titleKey(title, namespaces);
  if (t) addPage(tags, t, namespaces, paired);
  return { source: 'purge', type: 'purge', tags: [...tags], users: [], at: undefined };
}

/**
 * A purged page that the wiki confirms changed (a new revision, or gone): what lists of its
 * namespace, searches of its entity type and any-change answers depend on. `onlyStatements`: the
 * wiki showed that what changed since the page was last seen is one revision of its statements
 * alone (purge-confirmation.ts), so searches of its entity type stay; `onlySitelinks`, of its
 * sitelinks alone: the same, but the site-and-title lookups go.
 */
export function changeConfirmed(
  title: string,
  namespaces: Namespaces = DEFAULT_NAMESPACES,
  onlyStatements = false,
  pageId?: number,
  existence = false,
  onlySitelinks = false,
): Change {
  const tags = new Set<string>([ANY]);
  // Answers that name the page by its id alone (MediaInfo's `M123`: entities.ts entityPageId).
  if (pageId !== undefined && pageId > 0) tags.add(`i:${pageId}`);
  const t = titleKey(title, namespaces);
  if (t) {
    // Not its subject or talk page's, even when it came to exist or ceased to: the wiki sends
    // that page's own PURGE then (addPage). `existence` also says a property's datatype may have
    // changed (a revision no Wikibase module made), which an edit of any page's text is.
    addPage(tags, t, namespaces, false);
    addClasses(tags, t, namespaces, undefined, onlyStatements, onlySitelinks);
    // The wiki says it is gone now, or back (purge-confirmation.ts existenceChanged), or its
    // newest revision is no Wikibase module's (mayChangeDatatype).
    if (existence) addExistence(tags, t, namespaces);
  }
  return { source: 'purge', type: 'confirmed', tags: [...tags], users: [], at: undefined };
}

/**
 * The classes a changed page belongs to: its namespace, and its entity type when it is an entity's
 * page and the change may have touched more than its statements (`onlyStatements`) or its
 * sitelinks (`onlySitelinks`); an item's sitelinks (SITELINKS) unless it touched its statements alone.
 */
function addClasses(
  tags: Set<string>,
  t: { readonly key: string; readonly ns: number },
  namespaces: Namespaces,
  ns: unknown,
  onlyStatements: boolean,
  onlySitelinks = false,
): void {
  tags.add(`n:${typeof ns === 'number' ? ns : t.ns}`);
  const type = entityTypeOfPage(t, namespaces);
  if (type === undefined || onlyStatements) return;
  if (!onlySitelinks) tags.add(entityTypeTag(type));
  if (type === 'item') tags.add(SITELINKS);
}

/**
 * A page that came to exist or ceased to (deleted, restored), or a revision that may have changed
 * a property's datatype (mayChangeDatatype): a property's page takes its datatype with it, which
 * entity answers with statements show (dependencies.ts DATATYPES).
 */
function addExistence(tags: Set<string>, t: { readonly key: string; readonly ns: number }, namespaces: Namespaces): void {
  if (entityTypeOfPage(t, namespaces) === 'property') tags.add(DATATYPES);
}

/**
 * The key of the autocomment opening an edit summary, and its module: Wikibase's SummaryFormatter
 * (repo/includes/SummaryFormatter.php formatAutoComment) writes the Summary's message key (the API
 * module's name, then `-` and the action when there is one: lib/includes/Summary.php
 * getMessageKey), then `:`, the count and the arguments, between the markers `/*` and its close;
 * the summary a client typed comes after it. The captures' rows: `wbsetclaimvalue:1|`,
 * `wbcreateclaim-create:1|`, `wbsetlabel-set:1|de`, `wbeditentity-update-languages-short:0||de`.
 */
const AUTOCOMMENT = /^\/\* ([a-z]+)(?:-[a-z-]+)?:/;

/**
 * The change tags MediaWiki gives a revert (EditResult::getRevertTags, RollbackPage): an undo
 * or a rollback of an entity page is allowed through the API (Wikibase's RepoHooks
 * onApiCheckCanExecute), and its summary is whatever its client typed, a statement module's
 * autocomment included; what it reverts may be a label. Such a revision is never statements-only.
 *
 * `mw-manual-revert` too, although a Wikibase module's save that sets a value or a label back
 * gets it (EditResultBuilder::detectManualRevert: its content equals a recent revision's), and
 * is then taken for a revert of anything (docs/INVALIDATION.md, known limits): an API undo whose
 * base revision is stale is merged (EditPage::mergeChangesIntoContent), and a merge that is no
 * clean undo (EditPage::isUndoClean) but restores an earlier content carries it alone, with the
 * summary its client typed.
 */
const REVERT_TAGS: ReadonlySet<string> = new Set(['mw-undo', 'mw-rollback', 'mw-manual-revert']);

/**
 * Whether a revision of a property's page may have changed its datatype, which entity answers with
 * statements show (dependencies.ts DATATYPES). Wikibase's API modules never change an existing
 * property's datatype; Wikibase's changePropertyDataType.php does (PropertyDataTypeChanger saves
 * a revision whose summary is its own, no autocomment), and so may an import or a revert of such a
 * revision. A summary that opens with a Wikibase write module's autocomment did not; any other
 * may have (a hidden one, none, a revert's: REVERT_TAGS). Property edits through the API, labels
 * in many languages by bots among them, therefore leave every item's answer in place.
 */
export function mayChangeDatatype(comment: unknown, changeTags: readonly string[] | undefined): boolean {
  if (typeof comment !== 'string') return true;
  if (changeTags?.some((tag) => REVERT_TAGS.has(tag))) return true;
  const module = AUTOCOMMENT.exec(comment)?.[1];
  return module === undefined || (writeFacts(module)?.entities !== true && !TERMS_AUTOCOMMENTS.has(module));
}

/**
 * Wikibase autocomments of term edits that name no API module: Special:SetLabelDescriptionAliases
 * (SpecialSetLabelDescriptionAliases::getSummaryForLabelDescriptionAliases), and, in Wikibase
 * after 1.39, wbeditentity's single-language term edits (EditSummaryHelper). Terms are no
 * datatype.
 */
const TERMS_AUTOCOMMENTS: ReadonlySet<string> = new Set(['wbsetlabeldescriptionaliases']);

/**
 * Whether an edit summary says its revision changed statements alone: its autocomment is one of a
 * statement module's (modules.ts WriteFacts.statementsOnly: wbcreateclaim, wbsetclaim,
 * wbsetclaimvalue, wbremoveclaims, wbsetqualifier, wbremovequalifiers, wbsetreference,
 * wbremovereferences, with whatever action). No summary, a hidden one, a summary that does not
 * open with an autocomment, or one of another module (wbeditentity, which may change anything;
 * wbsetsitelink and wblinktitles, which change site-and-title lookups; an undo) is not, nor is
 * a revert (REVERT_TAGS), whose summary its client typed.
 */
export function statementsOnlyComment(comment: unknown, changeTags: readonly string[] | undefined): boolean {
  if (typeof comment !== 'string') return false;
  if (changeTags?.some((tag) => REVERT_TAGS.has(tag))) return false;
  const module = AUTOCOMMENT.exec(comment)?.[1];
  return module !== undefined && writeFacts(module)?.statementsOnly === true;
}

/**
 * The autocomments of revisions that change an item's sitelinks alone: wbsetsitelink with any
 * action (SetSiteLink: add, set, remove, set-badges, add-both, set-both), wblinktitles connecting
 * a page to an existing item (LinkTitles: `connect`; `create` makes a new item), and the repository's
 * own edits after a client wiki's page was moved or deleted (the client queues them, the
 * repository's UpdateRepoOnMoveJob and UpdateRepoOnDeleteJob write them: `clientsitelink-update`,
 * `clientsitelink-remove`), many a minute on Wikidata.
 */
const SITELINK_AUTOCOMMENT = /^\/\* (?:wbsetsitelink(?:-[a-z-]+)?|wblinktitles-connect|clientsitelink-(?:update|remove)):/;

/**
 * Whether an edit summary says its revision changed sitelinks alone (SITELINK_AUTOCOMMENT); a
 * revert's (REVERT_TAGS) never does, its summary its client typed.
 */
export function sitelinksOnlyComment(comment: unknown, changeTags: readonly string[] | undefined): boolean {
  if (typeof comment !== 'string') return false;
  if (changeTags?.some((tag) => REVERT_TAGS.has(tag))) return false;
  return SITELINK_AUTOCOMMENT.test(comment);
}

/**
 * A page's tag, and its subject/talk pair's (titles.ts pairedKey) when `paired`: a page coming to
 * exist, ceasing to or changing its name alters answers about the other (`prop=info&inprop=talkid`,
 * `subjectid`), an edit of one alters nothing about the other. MediaWiki purges both pages on a
 * creation or a deletion and only the page on an edit (includes/page/WikiPage.php onArticleCreate,
 * onArticleDelete and onArticleEdit, reference/mediawiki-1.39/SOURCE-NOTES.md): an edit of
 * `Talk:Q42` leaves Q42's entity answers (test/unit/invalidation-talk-page-edit-leaves-the-subject.test.ts).
 */
function addPage(tags: Set<string>, t: { readonly key: string; readonly ns: number }, namespaces: Namespaces, paired: boolean): void {
  tags.add(`p:${t.key}`);
  if (!paired) return;
  const other = pairedKey(t, namespaces);
  if (other !== undefined) tags.add(`p:${other}`);
}

/** Every parameter changeFromWrite reads: a posted form is searched for these (mediawiki/php-post.ts). */
export { WRITE_PARAMETERS } from '../mediawiki/modules.js';

/**
 * The writes that delete or restore the pages they name (ApiDelete, ApiUndelete), or may change a
 * property's datatype: an undo or a restore of an older revision through action=edit, and
 * action=rollback, bring back the revision's datatype (changePropertyDataType.php changes it
 * outside the Wikibase API: policy/changes.ts mayChangeDatatype), and action=import, which may
 * create a page or bring any revision of a property's history, whatever its summary says
 * (test/unit/wikibase-write-answers-name-their-entities.test.ts). On other pages, nothing more.
 */
const DATATYPE_WRITES: ReadonlySet<string> = new Set(['delete', 'undelete', 'edit', 'rollback', 'import']);

/** Write parameters naming a file (ApiUpload, ApiFileRevert): the page is File:<name>. */
const FILE_PARAMS = new Set(['filename']);

/**
 * Where a write module's answer names the pages it changed (formatversion 1 and 2 alike): the
 * fields of its result object, or of each item when the result is a list (`purge`, `import`).
 * The answer names them as MediaWiki resolved them: a redirect followed (`edit&redirect=1`),
 * `pageid=` or a generator turned into titles, the talk page a move took along.
 */
const ANSWER_TITLE_FIELDS = ['title', 'from', 'to', 'target', 'talkfrom', 'talkto'];

/**
 * Wikibase's write answers and requests name the entities they change: `entity.id` (wbsetlabel,
 * wbeditentity), `from.id`/`to.id` (wbmergeitems), `redirect` (wbcreateredirect's target), the
 * claim GUID (`Q1$…`: the entity is the part before `$`) in `claim.id` and `claims[]`
 * (wbsetclaimvalue, wbremoveclaims), and in the request the parameters the module itself defines
 * (modules.ts WriteFacts.entityParameters, guidParameters): `id=`, `entity=`, `fromid=`/`toid=`,
 * `from=`/`to=`, `claim=`, `statement=`; WikibaseLexeme's name a lexeme, form or sense in
 * `lexemeId=`, `formId=`, `senseId=`, `source=`/`target=` and the answer's `form.id`, `sense.id`
 * (a form or sense is kept on its lexeme's page: entities.ts entityPageTitles). A parameter of
 * another module is not read: Wikibase ignores it, and a no-op write naming thousands of entities
 * in it would have had their pages invalidated and asked about.
 */
function entityIdsOfWrite(write: WriteFacts, params: (name: string) => string | undefined, json: Record<string, unknown>): string[] {
  const ids: string[] = [];
  const push = (v: unknown) => {
    if (typeof v === 'string' && v !== '') ids.push(v.includes('$') ? (entityOfGuid(v) ?? '') : v);
  };
  const obj = (v: unknown) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
  push(obj(json['entity'])['id']);
  push(obj(json['from'])['id']);
  push(obj(json['to'])['id']);
  push(obj(json['claim'])['id']);
  push(obj(json['form'])['id']);
  push(obj(json['sense'])['id']);
  for (const c of Array.isArray(json['claims']) ? json['claims'] : []) push(entityOfGuid(String(c)));
  // The request's only when the answer names none: what the gateway read of a form PHP may
  // have read otherwise is no more than a guess where the answer says (changeFromWrite's pages).
  if (ids.some((id) => id !== '')) return ids;
  // One value each (Wikibase refuses `Q1|Q2` as an id), but wbremoveclaims' list of GUIDs.
  for (const name of write.entityParameters ?? []) push(params(name));
  for (const name of write.guidParameters ?? []) {
    const value = params(name) ?? '';
    for (const v of write.guidsMulti ? value.split('|') : [value]) push(entityOfGuid(v));
  }
  // CreateRedirect answers the target's id as a string (`"redirect": "Q1"`): the source is named
  // by the request alone, so both are read.
  push(json['redirect']);
  return ids;
}

/**
 * A successful write that passed through the gateway: its pages changed. Read-your-writes even
 * where MediaWiki sends no PURGE (protect, merge, action=purge) and before the follower's next
 * poll. `params` are the request's parameters as PHP reads them ($_GET then $_POST), by name;
 * `answer` the write's answer as JSON (undefined when not JSON), which names the pages as
 * MediaWiki resolved them. Only the write modules named here count: a module is not taken for a
 * write because it was POSTed or given a `token` (checktoken and every read module take one
 * without complaint), or any client could empty every list with a cheap request. Undefined when
 * the request is not one of them.
 */
export function changeFromWrite(
  action: string,
  params: (name: string) => string | undefined,
  namespaces: Namespaces = DEFAULT_NAMESPACES,
  answer?: unknown,
): Change | undefined {
  const write = writeFacts(action);
  if (!write || !confirms(action, answer)) return undefined;
  const names = write.titles;
  // A purge changes no list (and needs no token: anyone may send one); only the pages it purged.
  if (action === 'purge') return purgedPages(answer, namespaces);
  const json = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
  // A write whose answer says it changed nothing (a null edit: no token needed from an anonymous
  // client, so anyone could otherwise empty every list on every replica at will): no list, no
  // namespace, no entity type, no user; only the pages it names, whose links update MediaWiki
  // still runs again (a null edit re-parses the page).
  const changed = !savedNothing(action, write, json);
  // A write whose answer cannot say whether it saved anything (modules.ts WriteFacts.unproven):
  // its pages' own answers now, the rest once the wiki confirms the pages changed, as for a PURGE.
  const entityIds = write.entities ? entityIdsOfWrite(write, params, json) : [];
  const entityPages = entityIds.flatMap((id) => entityPageTitles(id, namespaces));
  // MediaInfo ids name their File: page by id (entities.ts entityPageId).
  const entityPageIds = entityIds.map(entityPageId).filter((id): id is number => id !== undefined);
  // One naming MediaInfo ids alone is unproven too: its page's id now, its lists once the wiki's
  // own PURGE of the File: page is confirmed (or the follower reads its row), never `*` at once
  // (anyone allowed to edit could otherwise empty every list by setting a statement to itself).
  const unprovenWrite = typeof write.unproven === 'function' ? write.unproven(json) : write.unproven === true;
  const unproven = changed && unprovenWrite && (entityPages.length > 0 || entityPageIds.length > 0);
  const confirm: string[] = [];
  const tags = new Set<string>(changed && !unproven ? [ANY] : []);
  // A statement module's answer names no `entity` (captures 72, 73: `pageinfo`, the statement);
  // one that does is another module's (a form PHP read apart from the gateway): its full breadth
  // (docs/SECURITY.md class 64).
  const onlyStatements = write.statementsOnly === true && json['entity'] === undefined;
  const onlySitelinks = typeof write.sitelinksOnly === 'function' ? write.sitelinksOnly(json) : write.sitelinksOnly === true;
  const existence = DATATYPE_WRITES.has(action);
  // An edit of a page that existed changes nothing about its subject or talk page (addPage); its
  // answer says `new` when it made the page (ApiEditPage: `"new": true`, `""` in formatversion 1).
  // Any other write may create, delete or rename one: the pair's too.
  const paired = action !== 'edit' || createdPage(json['edit']);
  const addTitle = (text: string) => {
    const t = titleKey(text, namespaces);
    if (!t) return;
    if (changed && !unproven) {
      addPage(tags, t, namespaces, paired);
      addClasses(tags, t, namespaces, undefined, onlyStatements, onlySitelinks);
      if (existence) addExistence(tags, t, namespaces);
      return;
    }
    tags.add(`p:${t.key}`);
    if (unproven) confirm.push(t.key);
  };
  const users: string[] = [];
  const result = json[action];
  let answerNamesPages = false;
  for (const item of Array.isArray(result) ? result : [result]) {
    if (typeof item !== 'object' || item === null) continue;
    const o = item as Record<string, unknown>;
    for (const field of ANSWER_TITLE_FIELDS) {
      if (typeof o[field] !== 'string') continue;
      addTitle(o[field]);
      answerNamesPages = true;
    }
    if (typeof o['filename'] === 'string') {
      addTitle(`File:${o['filename']}`);
      answerNamesPages = true;
    }
    if (typeof o['pageid'] === 'number' && o['pageid'] > 0) {
      tags.add(`i:${o['pageid']}`);
      answerNamesPages = true;
    }
    // A move's subpages, moved with it (`movesubpages`): each `{from, to}` of ApiMove's
    // moveSubpages, under `subpages` and, for the talk page's, `subpages-talk`; one that failed
    // (`{from, errors}`, no `to`) changed nothing.
    for (const list of [o['subpages'], o['subpages-talk']]) {
      for (const sub of Array.isArray(list) ? list : []) {
        const moved = typeof sub === 'object' && sub !== null ? (sub as Record<string, unknown>) : {};
        if (typeof moved['from'] !== 'string' || typeof moved['to'] !== 'string') continue;
        addTitle(moved['from']);
        addTitle(moved['to']);
      }
    }
    // `deletetalk` (ApiDelete, since 1.38) deletes the talk page too, which the answer does not
    // name, and succeeds with a warning alone when there is none (DeletePage
    // `delete-error-associated-doesnotexist`): the talk page's own answers now, its lists once
    // the wiki confirms it is gone (purge-confirmation.ts: the deletion log names it).
    if (changed && action === 'delete' && typeof o['title'] === 'string' && params('deletetalk') !== undefined) {
      const t = titleKey(o['title'], namespaces);
      const talk = t && t.ns % 2 === 0 ? pairedKey(t, namespaces) : undefined;
      if (talk !== undefined) {
        tags.add(`p:${talk}`);
        confirm.push(talk);
      }
    }
    const userField = write.user;
    if (changed && userField && typeof o[userField] === 'string') users.push(o[userField]);
  }
  // The request's titles only when the answer names no page (filerevert's): the answer names
  // what MediaWiki changed, the request what the gateway read of a form PHP may have read
  // otherwise (a Content-Type or a multipart body the two parse apart: the query string's
  // `title` taken for the body's, with its namespace's lists and, on a property, every
  // statement answer; test/unit/attack-write-names-pages-its-answer-does-not.test.ts). Each is
  // one value: these parameters are not multi-valued (ApiEdit, ApiMove, … define them so), a `|`
  // makes the title invalid, never a list. A page id is one page's own answers, no list: read
  // always (a move's answer names no id).
  if (!answerNamesPages) {
    for (const name of names) {
      const text = params(name);
      if (text) addTitle(FILE_PARAMS.has(name) ? `File:${text}` : text);
    }
  }
  for (const name of write.pageIdParameters ?? []) {
    const id = pageIdOf(params(name));
    if (id !== undefined) tags.add(`i:${id}`);
  }
  if (write.entities) {
    for (const title of entityPages) addTitle(title);
    for (const id of entityPageIds) tags.add(`i:${id}`);
    // A write that names no entity it could be read from: as broadly as the follower would (a
    // statement module's, whatever entity it wrote, changed no search).
    if (entityPages.length === 0 && entityPageIds.length === 0 && changed && !onlyStatements) {
      for (const type of ['item', 'property', 'lexeme']) tags.add(entityTypeTag(type));
      tags.add(SITELINKS);
    }
  }
  const type = write.entities ? 'wikibase' : action;
  return { source: 'write', type, tags: [...tags], users, at: undefined, ...(confirm.length > 0 && { confirm: [...new Set(confirm)] }) };
}

/** Whether an edit's answer says it created its page (`new`, whatever its formatversion). */
function createdPage(result: unknown): boolean {
  if (typeof result !== 'object' || result === null) return true;
  const created = (result as Record<string, unknown>)['new'];
  return created !== undefined && created !== false;
}

/** A page id parameter as ParamValidator's IntegerDef reads it (`+05` is 5); one value, positive. */
function pageIdOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^\+?\d{1,15}$/.test(value)) return undefined;
  const id = Number(value);
  return id > 0 ? id : undefined;
}

/**
 * Whether a confirmed write's answer says it changed nothing (modules.ts WriteFacts.unchanged):
 * every item of its result does, and there is at least one. A Wikibase write's item is its
 * `entity`; a core module's its result object, or each item of a list result (tag, import). An
 * answer the module table cannot read that way changed something, as far as the gateway knows.
 */
function savedNothing(action: string, write: WriteFacts, json: Readonly<Record<string, unknown>>): boolean {
  const unchanged = write.unchanged;
  if (!unchanged) return false;
  const result = write.entities ? json['entity'] : json[action];
  const items = Array.isArray(result) ? result : [result];
  return items.length > 0 && items.every((item) => typeof item === 'object' && item !== null && unchanged(item as Record<string, unknown>));
}

/**
 * Whether the answer is the successful answer of `action`: MediaWiki answers a write module
 * under its own name (`{"edit":{"result":"Success",…}}`, `{"delete":{…}}`, `{"purge":[…]}`),
 * Wikibase's with `"success":1`. What the gateway read of the request is not enough: PHP may
 * have read another form (max_input_vars, a body it could not read), and a request that did
 * not write must not invalidate anything.
 */
function confirms(action: string, answer: unknown): boolean {
  if (typeof answer !== 'object' || answer === null) return false;
  const json = answer as Record<string, unknown>;
  if (writeFacts(action)?.entities) return json['success'] === 1 && holdsOnly(json, WIKIBASE_WRITE_ANSWER_KEYS) && !isPlainObject(json['claims']);
  const result = json[action];
  if (typeof result !== 'object' || result === null) return false;
  if (Array.isArray(result)) return true;
  const status = (result as Record<string, unknown>)['result'];
  return status === undefined || status === 'Success';
}

/**
 * What a Wikibase write's answer holds (ResultBuilder: `entity`, `pageinfo`, `claim`, `claims` as a
 * list of GUIDs, `reference`, `redirect`, `from`/`to`/`redirected`, `normalized`; WikibaseLexeme:
 * `lastrevid`, `form`, `sense`) and what any answer may (ApiMain, ApiResult). Read modules answer
 * `"success": 1` too (wbgetentities beside `entities`, wbsearchentities beside `search`): a
 * multipart body PHP read as a wbgetentities and the gateway as a wbremoveclaims naming 100,000
 * statements was taken for that write (test/unit/attack-read-answer-taken-for-a-wikibase-write.test.ts).
 */
const WIKIBASE_WRITE_ANSWER_KEYS: ReadonlySet<string> = new Set([
  'success',
  'entity',
  'pageinfo',
  'claim',
  'claims',
  'reference',
  'redirect',
  'redirected',
  'from',
  'to',
  'normalized',
  'lastrevid',
  'form',
  'sense',
  'warnings',
  'servedby',
  'requestid',
  'curtimestamp',
  'uselang',
  'errorlang',
  'debuginfo',
  // A temporary account made by the write (MediaWiki 1.41 on: ApiCreateTempUserTrait).
  'tempusercreated',
  'tempuserredirect',
]);

function holdsOnly(json: Readonly<Record<string, unknown>>, keys: ReadonlySet<string>): boolean {
  for (const key of Object.keys(json)) if (!keys.has(key)) return false;
  return true;
}

function isPlainObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The write module an answer is the successful answer of (its top-level key), for a request
 * whose form could not be read (too large to be held: an upload); undefined when none. A
 * Wikibase write's answer does not name its module: one that answers an entity (`success: 1`,
 * `entity.id`) is taken for wbeditentity, the module that writes a whole entity and may change
 * anything of it (or for wbsetsitelink when it shows sitelinks alone), and the one whose body outgrows the buffer (an entity may be as large as
 * $wgMaxArticleSize, 2 MiB by default: WikibaseLib.default.php maxSerializedEntitySize); its
 * answer names the entity, and says when it saved nothing (`entity.nochange`). Before, such a
 * write invalidated nothing until the wiki's PURGE or the follower came.
 */
export function confirmedWrite(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  for (const key of Object.keys(answer)) if (writeFacts(key) && !writeFacts(key)?.entities && confirms(key, answer)) return key;
  const entity = (answer as Record<string, unknown>)['entity'];
  if (!confirms('wbeditentity', answer)) return undefined;
  if (typeof entity !== 'object' || entity === null) return wikibaseWriteWithoutEntity(answer as Record<string, unknown>);
  const fields = entity as Record<string, unknown>;
  if (typeof fields['id'] !== 'string') return undefined;
  // wbsetsitelink answers the entity with its sitelinks alone (SetSiteLink::addToOutput), and
  // changes no search; wbeditentity answers the whole entity (labels, claims and the rest, empty
  // ones too). An account that made its sitelink write unreadable on purpose (1,001 dummy
  // fields) had every search of the entity's type emptied.
  const termsOrStatements = ['labels', 'descriptions', 'aliases', 'claims', 'statements'].some((f) => f in fields);
  return 'sitelinks' in fields && !termsOrStatements ? 'wbsetsitelink' : 'wbeditentity';
}

/**
 * A Wikibase write's answer without `entity`, named by what else it holds (ResultBuilder,
 * CreateRedirect, WikibaseLexeme): a statement by its GUID (`claim.id`: the statement setters and
 * wbcreateclaim; `claims`: wbremoveclaims), both items of a merge (`from.id`, `to.id`), a
 * redirect's target (`redirect`), a form or a sense (`form.id`, `sense.id`). Read through the
 * module whose answer names the same (its request parameters are not read: none are known). A
 * `reference` alone names no entity: the wiki's PURGE and the follower's row do. An unreadable
 * form's statement write invalidated nothing on the writer's replica
 * (test/unit/wikibase-write-answers-name-their-entities.test.ts).
 */
function wikibaseWriteWithoutEntity(json: Record<string, unknown>): string | undefined {
  const id = (v: unknown) => (typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)['id'] === 'string' ? true : false);
  if (id(json['claim'])) return 'wbsetclaim';
  if (Array.isArray(json['claims']) && json['claims'].length > 0) return 'wbremoveclaims';
  if (id(json['from']) && id(json['to'])) return 'wbmergeitems';
  if (typeof json['redirect'] === 'string' && json['redirect'] !== '') return 'wbcreateredirect';
  if (id(json['form']) || id(json['sense'])) return 'wbleditformelements';
  return undefined;
}

/** The pages an action=purge answer says it purged (not those missing, nor refused by its rate limit). */
function purgedPages(answer: unknown, namespaces: Namespaces): Change {
  const tags = new Set<string>();
  const items = (answer as Record<string, unknown>)['purge'];
  for (const item of Array.isArray(items) ? items : []) {
    if (typeof item !== 'object' || item === null) continue;
    const o = item as Record<string, unknown>;
    if (o['purged'] === undefined || o['purged'] === false) continue;
    const t = typeof o['title'] === 'string' ? titleKey(o['title'], namespaces) : undefined;
    if (t) tags.add(`p:${t.key}`);
    if (typeof o['pageid'] === 'number' && o['pageid'] > 0) tags.add(`i:${o['pageid']}`);
  }
  return { source: 'write', type: 'purge', tags: [...tags], users: [], at: undefined };
}
