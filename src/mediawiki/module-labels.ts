/**
 * The `module` label of the request metrics and the access log: MediaWiki's own module names,
 * from a closed set, so that a client inventing module names cannot grow the series count.
 * Pure: the request's modules (policy/request.ts modulesOf) in, one label out.
 */

/**
 * Module label values: MediaWiki 1.39 core's API actions and query submodules, plus Wikibase's
 * wbavailablebadges and whatever the operator's module table names. Anything else is `other`, so
 * a client inventing module names cannot grow the series count.
 */
const KNOWN_MODULES = [
  // actions
  'block',
  'changeauthenticationdata',
  'changecontentmodel',
  'checktoken',
  'clearhasmsg',
  'clientlogin',
  'compare',
  'createaccount',
  'delete',
  'edit',
  'emailuser',
  'expandtemplates',
  'feedcontributions',
  'feedrecentchanges',
  'feedwatchlist',
  'filerevert',
  'help',
  'imagerotate',
  'import',
  'linkaccount',
  'login',
  'logout',
  'managetags',
  'mergehistory',
  'move',
  'opensearch',
  'options',
  'paraminfo',
  'parse',
  'patrol',
  'protect',
  'purge',
  'query',
  'removeauthenticationdata',
  'resetpassword',
  'revisiondelete',
  'rollback',
  'rsd',
  'setnotificationtimestamp',
  'setpagelanguage',
  'spamblacklist',
  'tag',
  'unblock',
  'undelete',
  'unlinkaccount',
  'upload',
  'userrights',
  'validatepassword',
  'watch',
  'wbavailablebadges',
  // query submodules (list, prop, meta)
  'allcategories',
  'alldeletedrevisions',
  'allfileusages',
  'allimages',
  'alllinks',
  'allpages',
  'allredirects',
  'allrevisions',
  'alltransclusions',
  'allusers',
  'backlinks',
  'blocks',
  'categorymembers',
  'deletedrevs',
  'embeddedin',
  'exturlusage',
  'filearchive',
  'imageusage',
  'iwbacklinks',
  'langbacklinks',
  'logevents',
  'mystashedfiles',
  'pagepropnames',
  'pageswithprop',
  'prefixsearch',
  'protectedtitles',
  'querypage',
  'random',
  'recentchanges',
  'search',
  'tags',
  'usercontribs',
  'users',
  'watchlist',
  'watchlistraw',
  'categories',
  'categoryinfo',
  'contributors',
  'deletedrevisions',
  'duplicatefiles',
  'extlinks',
  'fileusage',
  'imageinfo',
  'images',
  'info',
  'iwlinks',
  'langlinks',
  'links',
  'linkshere',
  'pageprops',
  'redirects',
  'revisions',
  'stashimageinfo',
  'templates',
  'transcludedin',
  'allmessages',
  'authmanagerinfo',
  'filerepoinfo',
  'languageinfo',
  'siteinfo',
  'tokens',
  'userinfo',
];

export function moduleLabeller(extra: readonly string[]): (modules: readonly string[]) => string {
  const known = new Set([...KNOWN_MODULES, ...extra]);
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
