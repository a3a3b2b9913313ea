/**
 * The module table: everything the gateway knows about an API module of MediaWiki 1.39 core and
 * of Wikibase REL1_39, in one place. A module is one entry here plus its tests; what is not here
 * is an unknown module (label `other`, depends on any change, never a write).
 *
 * Per module:
 * - `depends`: what its answers depend on (policy/dependencies.ts turns it into tags):
 *     pages      the pages the request names and, above all, those the answer lists;
 *     namespace  any page of one namespace (`namespace`: the parameter naming it, its default);
 *     entities   the Wikibase entities the request and the answer name (their pages);
 *     terms      the terms of one entity type (a search: `t:<type>`, any entity of that type changed);
 *     any        any change at all (lists any change can alter; the safe default);
 *     nothing    its TTL alone (configuration and code).
 *   A function when the request decides (`prop=info&inprop=protection` reads what no change names).
 * - `jobs`: it reads what MediaWiki's jobs update without a change signal (links tables, search
 *   index), or what only a job's PURGE names (a redirect's target, printed by a Wikibase
 *   formatter), or what a rendering on request reads (parser functions, the labels an entity
 *   diff prints), so it keeps the short TTL defaults whatever the follower.
 * - `expiries`: it shows protections or blocks, which end at their expiry with no signal.
 * - `live`: it reads what changes with no recentchanges row (the replicas' lag), so it keeps the
 *   short TTL defaults whatever the follower.
 * - `clock`: its answer carries the wiki's clock.
 * - `echoes`: it prints the current user's name into text the request supplies.
 * - `filtersByRequester`: its answer leaves out or keeps rows by who asks (the current user's own
 *   changes), though the wiki marks it public: it passes (steps/recv.ts).
 * - `write`: it changes the wiki; the parameters naming the pages it changes, the answer field
 *   naming a user whose rights changed, whether it names Wikibase entities.
 * - `pass`: never answered from the cache (list=random must answer something else each time).
 *
 * Whether a request may write at all, by method and target, whatever its module (index.php
 * writes on a GET with a token): `wrote`.
 *
 * Sources: MediaWiki 1.39 includes/api/ApiMain.php $Modules and ApiQuery.php $QueryListModules,
 * $QueryPropModules, $QueryMetaModules; Wikibase REL1_39 repo/WikibaseRepo.ServiceWiring and
 * extension-repo.json APIModules / APIListModules / APIPropModules / APIMetaModules.
 */
import { parameterName, redactSubpages } from '../http/redaction.js';
import { type PhpArray, phpStringParam, split } from './php-input.js';
import {
  claimEntities,
  datatypeFromProperty,
  datatypeProperty,
  formatsRedirectable,
  formatValueEntities,
  idsIn,
  normalizesAtAClient,
  readsTimeMessages,
  rendersRemoteFile,
  searchTypeOf,
  validatesEntities,
  validatesRemotely,
} from './wikibase-params.js';

export type DependencyClass = 'pages' | 'namespace' | 'entities' | 'terms' | 'any' | 'nothing';

export interface WriteFacts {
  /** Request parameters naming the pages it changes (`upload`'s `filename` is a File: page). */
  readonly titles: readonly string[];
  /** The answer field naming a user whose rights or block changed (their sessions' entries go). */
  readonly user?: string;
  /** A Wikibase write: it names the entities it changes (policy/changes.ts entityIdsOfWrite). */
  readonly entities?: true;
  /**
   * A Wikibase write's own parameters naming the entity it changes (`id`, `entity`, `fromid`…), or
   * one of its statements by GUID (`claim`, `statement`): those the module defines, never those
   * of another. Wikibase ignores a parameter its module does not define (a warning), so a write
   * could otherwise name any entity and have its page invalidated and asked about (policy/changes.ts).
   */
  readonly entityParameters?: readonly string[];
  readonly guidParameters?: readonly string[];
  /**
   * Its own parameters naming a page by id, one integer each (ApiEditPage `pageid`, ApiMove
   * `fromid`, ApiMergeHistory `fromid`/`toid`). Never another module's: MediaWiki ignores a
   * parameter its module does not define (ApiMain::reportUnusedParams, a warning), so a null edit
   * given `fromid=1|2|…|165000` would otherwise evict the answers of every page it listed.
   */
  readonly pageIdParameters?: readonly string[];
  /** Its GUID parameter takes several values (wbremoveclaims' `claim`, ParamValidator ISMULTI). */
  readonly guidsMulti?: true;
  /**
   * Whether one item of its answer (the module's result object, each item of a list result; a
   * Wikibase write's `entity`) says the write changed nothing: no revision, no log entry, no
   * recentchanges row. Such a write invalidates no list (policy/changes.ts changeFromWrite).
   */
  readonly unchanged?: (item: Readonly<Record<string, unknown>>) => boolean;
  /**
   * Its answer never says whether it saved anything, though it may save nothing (a null edit):
   * the lists its change touches go only once the wiki confirms its pages changed (policy/changes.ts
   * Change.confirm), or anyone could empty them at will. A function when some answers do prove a
   * change (it says whether this one does not).
   */
  readonly unproven?: true | ((answer: Readonly<Record<string, unknown>>) => boolean);
  /**
   * A Wikibase write that changes statements alone (their main snaks, qualifiers, references,
   * ranks), never labels, descriptions, aliases or sitelinks: what searches of its entity type
   * match and show does not change (policy/changes.ts). The autocomment opening its edit summary
   * names it (`wbsetclaimvalue:1|`, `wbcreateclaim-create:1|`: Wikibase's SummaryFormatter writes
   * the API module's name, then `-` and the action when there is one), so a recentchanges row or
   * a revision says it too (policy/changes.ts statementsOnlyComment).
   */
  readonly statementsOnly?: true;
  /**
   * A Wikibase write that changes sitelinks alone (wbsetsitelink): searches stay (policy/changes.ts
   * sitelinksOnlyComment). A function when its answer tells (it says whether this one does).
   */
  readonly sitelinksOnly?: true | ((answer: Readonly<Record<string, unknown>>) => boolean);
}

export interface ModuleFacts {
  readonly depends: DependencyClass | ((query: PhpArray, generator: boolean) => DependencyClass);
  /** For `namespace`: the parameter naming the namespace(s) (none: always `fallback`). */
  readonly namespace?: { readonly param: string; readonly fallback: number };
  readonly jobs?: boolean | ((query: PhpArray) => boolean);
  readonly expiries?: (query: PhpArray) => boolean;
  /**
   * It reads what changes with no recentchanges row at all (the replicas' lag, the job queue's
   * length, a remote repository): the short TTL defaults whatever the follower.
   */
  readonly live?: (query: PhpArray) => boolean;
  readonly clock?: (query: PhpArray) => boolean;
  readonly echoes?: (query: PhpArray) => boolean;
  /**
   * Its answer is filtered relative to the current user, whose name an anonymous requester's
   * address is (User::getName(), WebRequest::getIP()), yet the wiki calls it public: shared, it
   * would hide one requester's changes from everyone else, and tell who asked first.
   */
  readonly filtersByRequester?: (query: PhpArray) => boolean;
  readonly write?: WriteFacts;
  readonly pass?: true;
  /**
   * For `entities`: the entity ids the request names; undefined when it names them some other
   * way (by site and title) or unreadably, so that only the answer can say.
   */
  readonly entityIds?: (query: PhpArray) => string[] | undefined;
  /**
   * For `entities`: its answer names no entity its request does not (wbformatvalue prints one
   * value, wbformatentities keys its answer by the ids asked for), so an answer that cannot be
   * read (format=xml, php, …) loses nothing (a redirect's target it prints without naming it:
   * `jobs`). Otherwise such an answer depends on any change: it
   * may name entities only it knows (a redirect's target, an entity found by site and title).
   */
  readonly answerNamesNoOther?: true;
  /**
   * Its answer shows interface messages a MediaWiki: page may override, whatever its class:
   * Wikibase's time formatter and parser read month names and `wikibase-time-precision-*`
   * (MwTimeIsoFormatter, Language::sprintfDate: wikibase-params.ts readsTimeMessages),
   * wbformatentities prints `wikibase-deletedentity-*` for an entity that is gone. Such an answer
   * also depends on the MediaWiki namespace (n:8).
   */
  readonly messages?: true | ((query: PhpArray) => boolean);
  /** For `terms`: the entity type searched. */
  readonly searchType?: (query: PhpArray, generator: boolean) => string;
  /** A Wikibase module: its own row in the dashboard. */
  readonly wikibase?: true;
}

const ANY: ModuleFacts = { depends: 'any' };
const NOTHING: ModuleFacts = { depends: 'nothing' };
const PAGES: ModuleFacts = { depends: 'pages' };
/** Page modules reading the links tables (and page_props), which jobs update (RefreshLinksJob). */
const LINKS_TABLE: ModuleFacts = { depends: 'pages', jobs: true };
/** Lists over what jobs or the search index keep (categorylinks, templatelinks, …). */
const JOB_LIST: ModuleFacts = { depends: 'any', jobs: true };

const values = (query: PhpArray, name: string) => split(phpStringParam(query, name));

const isEmptyList = (value: unknown) => Array.isArray(value) && value.length === 0;

/**
 * What one siteinfo prop reads beyond the wiki's configuration and code (ApiQuerySiteinfo::execute
 * and its append* methods):
 * - `depends`: `any` for the wiki's content, or a table whose change no recentchanges row names
 *   a page of; `messages` for interface messages, which an edit of a MediaWiki: page changes;
 * - `live`: it changes with no recentchanges row at all, so the follower cannot vouch for it.
 */
interface SiteinfoProp {
  readonly depends?: 'any' | 'messages';
  readonly live?: true;
}

const CONFIGURATION: SiteinfoProp = {};

/** Every prop of ApiQuerySiteinfo::getAllowedParams; one not here is read as depending on any change. */
const SITEINFO_PROPS: Readonly<Record<string, (query: PhpArray) => SiteinfoProp>> = {
  // Title::newMainPage() reads the `mainpage` message (its `time` caps it to seconds anyway).
  general: () => ({ depends: 'messages' }),
  // The interwiki table: Special:Interwiki logs a change under its own title alone, so only `*`
  // follows it; an extra language link's text is an `interlanguage-link-*` message.
  interwikimap: () => ({ depends: 'any' }),
  // LoadBalancer::getMaxLag: the replicas' lag at the moment asked.
  dbrepllag: () => ({ live: true }),
  // SiteStats: pages, edits, users change with every change; `jobs` (the job queue's length) and
  // `activeusers` (recounted by a job) with none.
  statistics: () => ({ depends: 'any', live: true }),
  // Members counted per group (`sinumberingroup`): rights changes and new accounts are logged, but
  // a membership ends at its expiry (user_groups.ug_expiry) with no log row.
  usergroups: (query) => (query.has('sinumberingroup') ? { depends: 'any', live: true } : CONFIGURATION),
  // A skin's name is its `skinname-*` message.
  skins: () => ({ depends: 'messages' }),
  namespaces: () => CONFIGURATION,
  namespacealiases: () => CONFIGURATION,
  specialpagealiases: () => CONFIGURATION,
  magicwords: () => CONFIGURATION,
  autocreatetempuser: () => CONFIGURATION,
  clientlibraries: () => CONFIGURATION,
  libraries: () => CONFIGURATION,
  extensions: () => CONFIGURATION,
  fileextensions: () => CONFIGURATION,
  rightsinfo: () => CONFIGURATION,
  restrictions: () => CONFIGURATION,
  languages: () => CONFIGURATION,
  languagevariants: () => CONFIGURATION,
  extensiontags: () => CONFIGURATION,
  functionhooks: () => CONFIGURATION,
  showhooks: () => CONFIGURATION,
  variables: () => CONFIGURATION,
  protocols: () => CONFIGURATION,
  defaultoptions: () => CONFIGURATION,
  uploaddialog: () => CONFIGURATION,
  autopromote: () => CONFIGURATION,
  autopromoteonce: () => CONFIGURATION,
  copyuploaddomains: () => CONFIGURATION,
};

function siteinfoProps(query: PhpArray): SiteinfoProp[] {
  return siprops(query).map((p) => (Object.hasOwn(SITEINFO_PROPS, p) ? SITEINFO_PROPS[p]!(query) : { depends: 'any' }));
}

function siteinfoDepends(query: PhpArray): DependencyClass {
  const props = siteinfoProps(query);
  if (props.some((p) => p.depends === 'any')) return 'any';
  return props.some((p) => p.depends === 'messages') ? 'namespace' : 'nothing';
}

function siprops(query: PhpArray): string[] {
  return split(phpStringParam(query, 'siprop') ?? 'general');
}

/** Interface messages: what an edit of a MediaWiki: page (namespace 8) changes. */
const MESSAGES = { param: '', fallback: 8 } as const;

/**
 * prop=info reading a page's restrictions: its protection (`inprop=protection`), which a
 * cascading protection of another page sets with no change naming this page, and what a user
 * may do with it (`intestactions`), which also depends on those.
 */
function readsRestrictions(query: PhpArray): boolean {
  return (phpStringParam(query, 'inprop') ?? '').split('|').includes('protection') || query.has('intestactions');
}

const propOf = (name: string, value: string) => (query: PhpArray) => values(query, name).includes(value);

/**
 * A module whose `param` asks for `parsedcomment`: a summary's links rendered, each with the
 * class that says whether its page exists (CommentFormatter, LinkRenderer), while a page's
 * creation or deletion names only that page. Lists that depend on any change have it covered;
 * those of named pages (prop=revisions, imageinfo, action=compare) or of a namespace (allimages)
 * keep the short TTL defaults (`jobs`).
 */
const rendersComments = (param: string) => propOf(param, 'parsedcomment');

/** paraminfo prints its modules' help (interface messages, rendered) unless `helpformat` is `none`, its default. */
const rendersHelp = (query: PhpArray) => (phpStringParam(query, 'helpformat') ?? 'none') !== 'none';

/** A parse of supplied text (or summary) reads no stored page; a parse of a page reads it and its templates. */
const parsesText = (query: PhpArray) => query.has('text') || query.has('summary');

/**
 * A flag of an answer: `""` in formatversion 1, `true` in 2 (ApiResult), absent when false.
 */
const flagged = (value: unknown) => value !== undefined && value !== false;

/**
 * A null edit: ApiEditPage answers `"result":"Success"` with `nochange` and no `newrevid`
 * (PageUpdater made no revision, so no recentchanges row); only the page's links update runs again.
 */
const nullEdit = (item: Readonly<Record<string, unknown>>) => flagged(item['nochange']);

/** What ModifyEntity::addToOutput puts in every entity answer besides what the module wrote. */
const ENTITY_ANSWER_BASICS: ReadonlySet<string> = new Set(['id', 'type', 'lastrevid', 'nochange']);

/**
 * An answer whose entity shows its sitelinks and nothing else it wrote (SetSiteLink,
 * LinkTitles: ResultBuilder::addSiteLinks beside addBasicEntityInformation): what the wiki ran is
 * a sitelink write, whatever module the gateway read in the request (a form PHP reads apart from
 * the gateway names another; docs/SECURITY.md class 64).
 */
export const showsSitelinksAlone = (answer: Readonly<Record<string, unknown>>): boolean => {
  const entity = answer['entity'];
  if (typeof entity !== 'object' || entity === null || Array.isArray(entity)) return false;
  const keys = Object.keys(entity);
  return keys.includes('sitelinks') && keys.every((k) => k === 'sitelinks' || ENTITY_ANSWER_BASICS.has(k));
};

/** A wblinktitles answer whose entity shows one sitelink: the one it added to an existing item. */
const connectsOneSitelink = (answer: Readonly<Record<string, unknown>>): boolean => {
  if (!showsSitelinksAlone(answer)) return false;
  const sitelinks = (answer['entity'] as Record<string, unknown>)['sitelinks'];
  return typeof sitelinks === 'object' && sitelinks !== null && Object.keys(sitelinks).length === 1;
};

/** What a Wikibase write's facts say of the parameters naming its entity (WriteFacts.entityParameters), and of what it changes. */
interface EntityNaming {
  readonly entityParameters?: readonly string[];
  readonly guidParameters?: readonly string[];
  readonly guidsMulti?: true;
  readonly sitelinksOnly?: WriteFacts['sitelinksOnly'];
}

/**
 * A Wikibase write that saved nothing new: ModifyEntity::addToOutput passes the revision before
 * the save to ResultBuilder::addRevisionIdFromStatusToResult, which flags `entity.nochange` when
 * the saved revision is that one (wbsetlabel, wbeditentity, … given what the entity already has).
 */
const wikibaseWrite = (naming: EntityNaming): ModuleFacts => ({
  depends: 'any',
  write: { titles: [], entities: true, unchanged: nullEdit, ...naming },
  wikibase: true,
});

/**
 * Wikibase's statement setters answer `pageinfo.lastrevid` and pass no revision before the save to
 * ResultBuilder::addRevisionIdFromStatusToResult (SetClaimValue, SetClaim, SetQualifier,
 * SetReference: execute), so their answer never flags `nochange`; setting what a statement already
 * has saves nothing, and anonymous clients may do it.
 */
const wikibaseStatementSetter = (naming: EntityNaming): ModuleFacts => ({
  depends: 'any',
  write: { titles: [], entities: true, unproven: true, statementsOnly: true, ...naming },
  wikibase: true,
});

/**
 * Wikibase writes whose answer never says whether they saved anything: their entities' pages go at
 * once, their lists once the wiki confirms a new revision (policy/changes.ts `unproven`).
 * - wbcreateredirect over a redirect that already points there saves nothing
 *   (EntityRedirectCreationInteractor::checkCanCreateRedirect: "It's ok to override a redirect
 *   with a redirect"; WikiPageEntityStore::saveEntityContent returns the current revision for
 *   equal content), yet CreateRedirect::createRedirect answers `{"success":1,"redirect":…}` either
 *   way, and anonymous clients may call it (Wikibase's default `item-redirect` right is `*`).
 * - WikibaseLexeme's writes answer `"success":1` and at most the form or sense they wrote, never
 *   `nochange` (AddForm::fillApiResultFromStatus, MergeLexemes::showSuccessMessage), and
 *   wbleditformelements or wbleditsenseelements given what the form or sense already has saves
 *   nothing. They name their lexeme by `lexemeId` (wbladdform, wbladdsense), a form or sense id
 *   (`formId`, `senseId`, `id`: `L1-F2` is kept on L1's page) or `source` and `target`
 *   (wblmergelexemes: both pages change, the source becoming a redirect).
 */
const wikibaseUnprovenWrite = (naming: EntityNaming): ModuleFacts => ({
  depends: 'any',
  write: { titles: [], entities: true, unproven: true, ...naming },
  wikibase: true,
});

/**
 * Wikibase's writes of statements that always change what they name when they succeed
 * (CreateClaim adds a statement with a new GUID; RemoveClaims, RemoveQualifiers and
 * RemoveReferences fail with a ChangeOpException on a GUID or hash the entity does not have):
 * each a ChangeOp on the entity's StatementList alone. Their answer says only
 * `pageinfo.lastrevid` (ResultBuilder::addRevisionIdFromStatusToResult is passed no revision
 * before the save, so it never flags `nochange`; capture 72, and capture 73 of a setter).
 */
const wikibaseStatementWrite = (naming: EntityNaming): ModuleFacts => ({
  depends: 'any',
  // Their own answers name no entity; one that does, flagging `nochange`, is another module's
  // null edit (a form PHP read apart from the gateway): it saved nothing (docs/SECURITY.md class 64).
  write: { titles: [], entities: true, unchanged: nullEdit, statementsOnly: true, ...naming },
  wikibase: true,
});

/** `id` (ModifyEntity: wbeditentity, wbsetlabel, wbsetdescription, wbsetaliases, wbsetsitelink; WikibaseLexeme's removals). */
const BY_ID: EntityNaming = { entityParameters: ['id'] };
/** A statement by its GUID in `claim` (SetClaimValue, SetClaim, SetQualifier, RemoveQualifiers). */
const BY_CLAIM: EntityNaming = { guidParameters: ['claim'] };
/** A statement by its GUID in `statement` (SetReference, RemoveReferences). */
const BY_STATEMENT: EntityNaming = { guidParameters: ['statement'] };

/** action= modules. */
export const ACTIONS: Readonly<Record<string, ModuleFacts>> = {
  // Reads
  query: { depends: (query) => (['titles', 'pageids', 'revids'].some((p) => query.has(p)) ? 'pages' : 'nothing') },
  parse: {
    depends: (query) => (parsesText(query) ? 'any' : 'pages'),
    jobs: (query) => !parsesText(query),
    // A preview (`preview`, `sectionpreview`) renders {{REVISIONUSER}} as the current user
    // whenever the revision shows no author to the public (its user hidden by revision deletion):
    // Parser::getRevisionUser falls back to the ParserOptions' user when getIsPreview
    // (includes/parser/Parser.php), which ApiParse::makeParserOptions sets from either (1.39).
    echoes: (query) => query.has('text') || query.has('pst') || query.has('onlypst') || query.has('preview') || query.has('sectionpreview'),
  },
  compare: { depends: 'pages', echoes: (query) => query.has('frompst') || query.has('topst'), jobs: rendersComments('prop') },
  expandtemplates: { depends: 'any', echoes: () => true },
  // Help text is interface messages (`apihelp-*`), which the wiki's MediaWiki: pages override;
  // paraminfo prints them unless `helpformat` is `none`, its default.
  // Messages are rendered (Message::parse, ::text): the preprocessor expands the templates and
  // parser functions they hold, which their namespace's changes do not name (`jobs`).
  help: { depends: 'namespace', namespace: MESSAGES, jobs: true },
  paraminfo: {
    depends: (query) => (rendersHelp(query) ? 'namespace' : 'nothing'),
    namespace: MESSAGES,
    jobs: rendersHelp,
  },
  rsd: NOTHING,
  opensearch: ANY,
  feedcontributions: ANY,
  // ApiFeedRecentChanges::execute sets the cache mode public, then hands its parameters to
  // Special:RecentChanges, whose `hidemyself` filter (ChangesListSpecialPage::registerFilters,
  // the `authorship` group) leaves out the rows whose actor is the current user: for an anonymous
  // reader, its address. Its other parameter relative to the user, `hidebyothers`, is not one of
  // ApiFeedRecentChanges::getAllowedParams, so the special page never sees it (DerivativeRequest
  // of the module's own parameters alone). A boolean API parameter is true when present
  // (PresenceBooleanDef): `hidemyself=0` filters too.
  feedrecentchanges: { depends: 'any', filtersByRequester: (query) => query.has('hidemyself') },
  feedwatchlist: ANY,
  spamblacklist: ANY,
  validatepassword: ANY,
  checktoken: ANY,
  clearhasmsg: ANY,
  // Account and session modules: never cached (they set cookies or answer private), but known.
  login: ANY,
  clientlogin: ANY,
  logout: ANY,
  createaccount: ANY,
  linkaccount: ANY,
  unlinkaccount: ANY,
  changeauthenticationdata: ANY,
  removeauthenticationdata: ANY,
  resetpassword: ANY,
  options: ANY,
  emailuser: ANY,
  watch: ANY,
  patrol: ANY,
  setnotificationtimestamp: ANY,
  imagerotate: ANY,
  // Writes (ApiEditPage title/pageid, ApiMove from/to/fromid, ApiUpload filename, …)
  edit: { depends: 'any', write: { titles: ['title'], pageIdParameters: ['pageid'], unchanged: nullEdit } },
  move: { depends: 'any', write: { titles: ['from', 'to'], pageIdParameters: ['fromid'] } },
  delete: { depends: 'any', write: { titles: ['title'], pageIdParameters: ['pageid'] } },
  undelete: { depends: 'any', write: { titles: ['title'] } },
  protect: { depends: 'any', write: { titles: ['title'], pageIdParameters: ['pageid'] } },
  rollback: { depends: 'any', write: { titles: ['title'], pageIdParameters: ['pageid'] } },
  // A file stashed, or a chunk of one, answers `"result":"Success"` with its `filekey` and no
  // `filename` (ApiUpload::getStashResult, getChunkResult): nothing is published, no page or log
  // row made; only a published upload names its file (ApiUpload::performUpload). An answer with a
  // `stage` is a status (`checkstatus=1`): the session's record of a job's work
  // (PublishStashedFileJob: `stage: "publish"`, the filename), answered again for a day to any
  // such request; the job's own PURGE and row name what it published.
  upload: { depends: 'any', write: { titles: ['filename'], unchanged: (item) => typeof item['filename'] !== 'string' || item['stage'] !== undefined } },
  filerevert: { depends: 'any', write: { titles: ['filename'] } },
  mergehistory: { depends: 'any', write: { titles: ['from', 'to'], pageIdParameters: ['fromid', 'toid'] } },
  changecontentmodel: { depends: 'any', write: { titles: ['title'], pageIdParameters: ['pageid'] } },
  setpagelanguage: { depends: 'any', write: { titles: ['title'], pageIdParameters: ['pageid'] } },
  purge: { depends: 'any', write: { titles: ['titles'] } },
  revisiondelete: { depends: 'any', write: { titles: ['target'] } },
  // ApiImportReporter::reportPage: a page none of whose revisions was new imports `revisions: 0`;
  // a title it could not import is `invalid`.
  import: { depends: 'any', write: { titles: [], unchanged: (item) => item['revisions'] === 0 || flagged(item['invalid']) } },
  managetags: { depends: 'any', write: { titles: [] } },
  // ApiTag::processIndividual: only `status: "success"` without `noop` wrote a log entry
  // (`actionlogid`); `error` (no such revision), `failure` (ChangeTags refused, e.g. removing a
  // software tag: no right or rate limit checked first, any account may send it) and `skipped`
  // changed nothing.
  tag: { depends: 'any', write: { titles: [], unchanged: (item) => item['status'] !== 'success' || flagged(item['noop']) } },
  block: { depends: 'any', write: { titles: [], user: 'user' } },
  unblock: { depends: 'any', write: { titles: [], user: 'user' } },
  // ApiUserrights: the groups UserGroupManager really added and removed; none, no log entry.
  userrights: { depends: 'any', write: { titles: [], user: 'user', unchanged: (item) => isEmptyList(item['added']) && isEmptyList(item['removed']) } },
  // Wikibase reads
  wbgetentities: { depends: 'entities', entityIds: idsIn('ids'), wikibase: true, live: normalizesAtAClient },
  wbgetclaims: { depends: 'entities', entityIds: claimEntities, wikibase: true },
  wbformatvalue: {
    depends: 'entities',
    // A time, or an entity whose formatter prints `wikibase-deletedentity-*` when it is gone
    // (EntityIdHtmlLinkFormatter::getHtmlForNonExistent, as wbformatentities), or a value not
    // read here.
    messages: (query) => {
      const ids = formatValueEntities(query);
      return readsTimeMessages(query) || ids === undefined || ids.length > values(query, 'property').length;
    },
    entityIds: formatValueEntities,
    answerNamesNoOther: true,
    jobs: (query) => formatsRedirectable(formatValueEntities(query)),
    live: rendersRemoteFile,
    wikibase: true,
  },
  wbformatentities: {
    depends: 'entities',
    messages: true,
    entityIds: idsIn('ids'),
    answerNamesNoOther: true,
    jobs: (query) => formatsRedirectable(idsIn('ids')(query)),
    wikibase: true,
  },
  wbsearchentities: { depends: 'terms', searchType: searchTypeOf('type'), wikibase: true },
  wbparsevalue: {
    messages: readsTimeMessages,
    depends: (query) => (validatesEntities(query) || datatypeFromProperty(query) ? 'entities' : 'nothing'),
    entityIds: (query) => [...datatypeProperty(query), ...(validatesEntities(query) ? values(query, 'values') : [])],
    answerNamesNoOther: true,
    live: validatesRemotely,
    wikibase: true,
  },
  wbavailablebadges: { depends: 'nothing', wikibase: true },
  // Wikibase writes: they name their entities in the answer and the request (policy/changes.ts).
  wbeditentity: wikibaseWrite(BY_ID),
  wbsetlabel: wikibaseWrite(BY_ID),
  wbsetdescription: wikibaseWrite(BY_ID),
  wbsetaliases: wikibaseWrite(BY_ID),
  // Sitelinks and their badges alone: searches show none (policy/changes.ts sitelinksOnlyComment).
  wbsetsitelink: wikibaseWrite({ ...BY_ID, sitelinksOnly: showsSitelinksAlone }),
  // By sitelinks alone (fromsite/fromtitle, tosite/totitle): the answer's `entity.id` names it.
  // One sitelink added to the item that holds the other page's (LinkTitles::execute, `connect`:
  // the answer's entity shows that sitelink alone) changes sitelinks alone; a new item made of
  // both pages (`create`: two sitelinks) is an item's creation.
  wblinktitles: wikibaseWrite({ sitelinksOnly: connectsOneSitelink }),
  wbcreateclaim: wikibaseStatementWrite({ entityParameters: ['entity'] }),
  wbsetclaimvalue: wikibaseStatementSetter(BY_CLAIM),
  // Its `claim` is the statement's JSON: the answer's `claim.id` names it.
  wbsetclaim: wikibaseStatementSetter({}),
  wbremoveclaims: wikibaseStatementWrite({ guidParameters: ['claim'], guidsMulti: true }),
  wbsetqualifier: wikibaseStatementSetter(BY_CLAIM),
  wbremovequalifiers: wikibaseStatementWrite(BY_CLAIM),
  wbsetreference: wikibaseStatementSetter(BY_STATEMENT),
  wbremovereferences: wikibaseStatementWrite(BY_STATEMENT),
  // A merge answers `"success":1` and both items' lastrevid whether or not it saved anything
  // (MergeItems::mergeItems; WikiPageEntityStore::saveEntityContent makes no revision for equal
  // content): merging again items whose conflicting descriptions `ignoreconflicts` left on the
  // source saves nothing, and emptied every list at each request. Its `redirected`, 1 once the
  // source became a redirect (ItemMergeInteractor: a redirect's save is a revision), proves one.
  wbmergeitems: {
    depends: 'any',
    write: { titles: [], entities: true, unproven: (answer) => answer['redirected'] !== 1, entityParameters: ['fromid', 'toid'] },
    wikibase: true,
  },
  wbcreateredirect: wikibaseUnprovenWrite({ entityParameters: ['from', 'to'] }),
  // WikibaseLexeme (extension.json APIModules).
  wbladdform: wikibaseUnprovenWrite({ entityParameters: ['lexemeId'] }),
  wbleditformelements: wikibaseUnprovenWrite({ entityParameters: ['formId'] }),
  wblremoveform: wikibaseUnprovenWrite(BY_ID),
  wbladdsense: wikibaseUnprovenWrite({ entityParameters: ['lexemeId'] }),
  wbleditsenseelements: wikibaseUnprovenWrite({ entityParameters: ['senseId'] }),
  wblremovesense: wikibaseUnprovenWrite(BY_ID),
  wblmergelexemes: wikibaseUnprovenWrite({ entityParameters: ['source', 'target'] }),
};

/**
 * The modules of ApiQueryRevisionsBase (prop=revisions `rv`, prop=deletedrevisions `drv`,
 * list=allrevisions `arv`, list=alldeletedrevisions `adr`; as a generator, `g` before the
 * prefix): `difftotextpst` pre-save-transforms the supplied `difftotext` as the current user
 * (ApiQueryRevisionsBase::extractDeprecatedContent: ContentTransformer::preSaveTransform with
 * $this->getUser()), so `~~~` becomes the requester's signature, while getCacheMode says public.
 * The diff marks up the address piece by piece (`203</ins>.<ins>0…`): no byte search finds it.
 * A boolean API parameter is true when present (PresenceBooleanDef), whatever its value.
 */
const pstOfDiffText =
  (prefix: string) =>
  (query: PhpArray): boolean =>
    query.has(`${prefix}difftotextpst`) || query.has(`g${prefix}difftotextpst`);

/**
 * The same modules rendering on request: `parse` and `expandtemplates` run the parser over the
 * content (ApiQueryRevisionsBase::extractDeprecatedContent), whose parser functions read what no
 * change names ({{PAGESINCATEGORY}}, #ifexist, a repository's own client reading entities), and
 * `diffto`/`difftotext` render a diff, which for an entity's content prints the labels of the
 * entities its statements name (Wikibase's EntityDiffVisualizer): a label's edit names only that
 * entity's page; and `prop=parsedcomment` (rendersComments). As `action=parse` of a page, the
 * follower cannot vouch for them.
 */
const rendersOnRequest =
  (prefix: string) =>
  (query: PhpArray): boolean =>
    ['parse', 'expandtemplates', 'diffto', 'difftotext'].some((p) => query.has(`${prefix}${p}`) || query.has(`g${prefix}${p}`)) ||
    rendersComments(`${prefix}prop`)(query);

/** Namespace-scoped lists (allredirects is not one: its `arnamespace` is the targets'). */
const inNamespace = (param: string, fallback: number): ModuleFacts => ({ depends: 'namespace', namespace: { param, fallback } });

/** list=, prop=, meta= and generator= modules of action=query. */
export const QUERY_MODULES: Readonly<Record<string, ModuleFacts>> = {
  // prop=
  info: {
    depends: (query) => (readsRestrictions(query) ? 'any' : 'pages'),
    expiries: readsRestrictions,
    // page_props' displaytitle (ApiQueryInfo::getDisplayTitle; varianttitles converts it), which
    // RefreshLinksJob writes when a transcluded template's {{DISPLAYTITLE:}} changes, as
    // prop=pageprops reads.
    jobs: (query) => propOf('inprop', 'displaytitle')(query) || propOf('inprop', 'varianttitles')(query),
  },
  revisions: { depends: 'pages', echoes: pstOfDiffText('rv'), jobs: rendersOnRequest('rv') },
  categories: LINKS_TABLE,
  templates: LINKS_TABLE,
  links: LINKS_TABLE,
  images: LINKS_TABLE,
  extlinks: LINKS_TABLE,
  iwlinks: LINKS_TABLE,
  langlinks: LINKS_TABLE,
  pageprops: LINKS_TABLE,
  imageinfo: { depends: 'pages', jobs: rendersComments('iiprop') },
  contributors: PAGES,
  pageimages: LINKS_TABLE,
  pageterms: PAGES,
  categoryinfo: JOB_LIST,
  extracts: JOB_LIST,
  deletedrevisions: { depends: 'any', echoes: pstOfDiffText('drv'), jobs: rendersOnRequest('drv') },
  duplicatefiles: ANY,
  fileusage: JOB_LIST,
  linkshere: JOB_LIST,
  transcludedin: JOB_LIST,
  redirects: ANY,
  stashimageinfo: ANY,
  // list=
  allpages: {
    depends: (query) => (query.has('apprtype') || query.has('gapprtype') ? 'any' : 'namespace'),
    namespace: { param: 'apnamespace', fallback: 0 },
    expiries: (query) => query.has('apprtype') || query.has('gapprtype'),
  },
  prefixsearch: inNamespace('psnamespace', 0),
  allimages: { ...inNamespace('', 6), jobs: rendersComments('aiprop') },
  // With `amenableparser` each message goes through the preprocessor (ApiQueryAllMessages::execute:
  // Message::text), which expands the templates and parser functions it holds.
  allmessages: { ...inNamespace('', 8), jobs: (query) => query.has('amenableparser') },
  allcategories: JOB_LIST,
  alldeletedrevisions: { depends: 'any', echoes: pstOfDiffText('adr'), jobs: rendersOnRequest('adr') },
  allfileusages: JOB_LIST,
  alllinks: JOB_LIST,
  allredirects: ANY,
  allrevisions: { depends: 'any', echoes: pstOfDiffText('arv'), jobs: rendersOnRequest('arv') },
  alltransclusions: JOB_LIST,
  allusers: { depends: 'any', expiries: propOf('auprop', 'blockinfo') },
  backlinks: JOB_LIST,
  blocks: { depends: 'any', expiries: () => true },
  categorymembers: JOB_LIST,
  deletedrevs: ANY,
  embeddedin: JOB_LIST,
  exturlusage: JOB_LIST,
  filearchive: ANY,
  imageusage: JOB_LIST,
  iwbacklinks: JOB_LIST,
  langbacklinks: JOB_LIST,
  logevents: ANY,
  mystashedfiles: ANY,
  pagepropnames: ANY,
  pageswithprop: JOB_LIST,
  protectedtitles: { depends: 'any', expiries: () => true },
  querypage: JOB_LIST,
  random: { depends: 'any', pass: true },
  recentchanges: ANY,
  search: JOB_LIST,
  tags: ANY,
  usercontribs: ANY,
  users: { depends: 'any', expiries: propOf('usprop', 'blockinfo') },
  watchlist: ANY,
  watchlistraw: ANY,
  globalblocks: { depends: 'any', expiries: () => true },
  // meta=
  siteinfo: {
    depends: siteinfoDepends,
    namespace: MESSAGES,
    live: (query) => siteinfoProps(query).some((p) => p.live === true),
    clock: (query) => siprops(query).includes('general'),
  },
  filerepoinfo: NOTHING,
  languageinfo: NOTHING,
  authmanagerinfo: ANY,
  tokens: ANY,
  userinfo: { depends: 'any', expiries: propOf('uiprop', 'blockinfo') },
  // Wikibase
  wbsearch: { depends: 'terms', searchType: searchTypeOf('wbstype'), wikibase: true },
  entityterms: { depends: 'pages', wikibase: true },
  wbcontentlanguages: { depends: 'nothing', wikibase: true },
  // wb_changes_subscription and wbc_entity_usage: written by the client wikis' links updates and
  // jobs (Wikibase's UsageUpdater, AddUsagesForPageJob), with no row in this wiki's recentchanges
  // and no PURGE: the short TTL, whatever the follower.
  wbsubscribers: { depends: 'any', jobs: true, wikibase: true },
  wblistentityusages: { depends: 'any', jobs: true, wikibase: true },
  // Wikibase Client's reading of the same wbc_entity_usage table, page by page.
  wbentityusage: { depends: 'any', jobs: true, wikibase: true },
};

/** The facts of an action (`query` included), or undefined for a module the table does not know. */
export function actionFacts(name: string): ModuleFacts | undefined {
  return Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
}

/** The facts of a query submodule, or undefined. */
export function queryModuleFacts(name: string): ModuleFacts | undefined {
  return Object.hasOwn(QUERY_MODULES, name) ? QUERY_MODULES[name] : undefined;
}

/**
 * The facts of each module a request runs (policy/request.ts modulesOf: the action, then for
 * action=query its generator and list/prop/meta submodules), undefined where unknown.
 */
export function factsOf(modules: readonly string[]): (ModuleFacts | undefined)[] {
  return modules.map((m, i) => (i === 0 ? actionFacts(m) : queryModuleFacts(m)));
}

/** Every module name the table knows: the bounded values of the `module` metric label. */
export const KNOWN_MODULE_NAMES: readonly string[] = [...Object.keys(ACTIONS), ...Object.keys(QUERY_MODULES)];

/** Wikibase's modules, for the dashboard's Wikibase row. */
export const WIKIBASE_MODULE_NAMES: readonly string[] = [
  ...Object.entries(ACTIONS)
    .filter(([, f]) => f.wikibase)
    .map(([m]) => m),
  ...Object.entries(QUERY_MODULES)
    .filter(([, f]) => f.wikibase)
    .map(([m]) => `query+${m}`),
];

/** The write modules and the parameters naming what they change (a posted form is searched for these). */
export function writeFacts(action: string): WriteFacts | undefined {
  return actionFacts(action)?.write;
}

/** Every Wikibase write's parameters naming an entity or a statement (WriteFacts.entityParameters, guidParameters). */
const ENTITY_NAMING_PARAMETERS: readonly string[] = Object.values(ACTIONS).flatMap((f) => [
  ...(f.write?.entityParameters ?? []),
  ...(f.write?.guidParameters ?? []),
]);

/**
 * Every parameter a write's change is read from: a posted multipart form is searched for these
 * alone (mediawiki/php-post.ts); test/unit/write-parameters-cover-what-changes-read.test.ts.
 */
export const WRITE_PARAMETERS: ReadonlySet<string> = new Set([
  'action',
  'new',
  // ApiDelete's: the talk page deleted too (policy/changes.ts changeFromWrite).
  'deletetalk',
  ...ENTITY_NAMING_PARAMETERS,
  ...Object.values(ACTIONS).flatMap((f) => f.write?.pageIdParameters ?? []),
  ...Object.values(ACTIONS).flatMap((f) => f.write?.titles ?? []),
]);

/**
 * Whether a request may change what its session sees: any method but GET and HEAD, and on the
 * streamed paths a GET that carries a token (`rawQuery`): index.php performs some writes on a
 * GET whose token proves the user meant it, MediaWiki 1.39's own links among them (the rollback
 * link `action=rollback&token=`, `action=markpatrolled&token=`, `action=watch&token=`). api.php
 * refuses a write by GET (mustBePosted), so its GETs never write.
 */
export function wrote(method: string, rawQuery?: string, rawPath?: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return true;
  // The e-mail links carry their token as a sub-page: Special:ConfirmEmail/<token> confirms the
  // address on a GET (http/redaction.ts knows them).
  if (rawPath !== undefined && redactSubpages(rawPath) !== rawPath) return true;
  return rawQuery !== undefined && (carriesToken(rawQuery) || redactSubpages(rawQuery) !== rawQuery);
}

/** A parameter named `token` or `…token` (wpEditToken), as PHP names it (http/redaction.ts parameterName). */
function carriesToken(rawQuery: string): boolean {
  if (!/token|%/i.test(rawQuery)) return false;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    if (/token$/.test(parameterName(eq === -1 ? pair : pair.slice(0, eq)))) return true;
  }
  return false;
}

/** The `echoes` of every query submodule that has one. */
const QUERY_MODULE_ECHOES: readonly ((query: PhpArray) => boolean)[] = Object.values(QUERY_MODULES).flatMap((f) => (f.echoes ? [f.echoes] : []));

/**
 * The request holds a parameter asking some query submodule to print the current user's name
 * into supplied text, whether or not it names that module in list/prop/generator: a module's
 * parameters carry its own prefix (ApiBase::encodeParamName), so one that does not run reads
 * none of them, and such a request left unshared costs that request alone. Being right then
 * never hangs on reading which modules run as ApiQuery does (mediawiki/requester-address.ts).
 */
export function queryModuleEchoes(query: PhpArray): boolean {
  return QUERY_MODULE_ECHOES.some((echoes) => echoes(query));
}

/**
 * The request's answer is filtered relative to whoever asks (the module table's
 * `filtersByRequester`): it passes, whatever the operator's module rules (steps/recv.ts).
 */
export function filtersByRequester(modules: readonly string[], query: PhpArray): boolean {
  // Every miss's recv step asks: a loop, no array of facts made for it.
  for (let i = 0; i < modules.length; i++) {
    const facts = i === 0 ? actionFacts(modules[i]!) : queryModuleFacts(modules[i]!);
    if (facts?.filtersByRequester?.(query) === true) return true;
  }
  return false;
}

/** Modules the gateway never answers from its cache unless the operator's rule says otherwise. */
export function passesByDefault(module: string): boolean {
  return queryModuleFacts(module)?.pass === true;
}

/**
 * The `module` label of the request metrics and the access log: MediaWiki's own module names,
 * from a closed set (every module of this table and whatever the operator's module rules name),
 * so that a client inventing module names cannot grow the series count. Pure: the request's
 * modules (policy/request.ts modulesOf) in, one label out; anything else is `other`.
 */
export function moduleLabeller(extra: readonly string[]): (modules: readonly string[]) => string {
  const known = new Set([...KNOWN_MODULE_NAMES, ...extra]);
  return (modules) => {
    const action = modules[0] ?? 'help';
    if (!known.has(action)) return 'other';
    if (action !== 'query' || modules.length === 1) return action;
    // One series per query submodule; several at once are folded, so combinations cannot explode.
    if (modules.length > 2) return 'query+multiple';
    const sub = modules[1]!;
    return known.has(sub) ? `query+${sub}` : 'query+other';
  };
}

/**
 * A POST whose form could not be read (a body too large to hold, streamed on as it came, or a
 * form PHP would not parse either): its module is not known, and the label says so rather than
 * guessing from the query string, which the body may override ($_POST wins over $_GET in
 * MediaWiki's WebRequest).
 */
export const UNKNOWN_MODULE = 'unknown';
