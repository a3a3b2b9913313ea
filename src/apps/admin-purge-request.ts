/**
 * What an admin purge (POST /purge on the admin listener) asks for, from its query or JSON body,
 * or why it asks for nothing the gateway can do: pure, so every refusal is one line of a table
 * test. Exactly one of:
 *
 *   all=1                   everything
 *   module=<name>           every entry whose request ran the module (a MediaWiki 1.39 core or
 *                           Wikibase module of mediawiki/modules.ts, one named in WIKIEDGE_MODULES,
 *                           or the metrics' label `query+<name>`)
 *   url=<api.php URL>       every variant of that URL, its parameters in any order
 *   prefix=<URL prefix>     cache/url-match.ts urlPrefixMatcher: its parameters in any order
 *   pattern=<glob>          cache/url-match.ts: `*` over the URL key as GET /cache shows it
 *   title=<page title>      every answer that depends on the page, and on its talk or subject page
 *                           (policy/changes.ts changeFromPurge, `paired`: the wiki's own PURGE
 *                           names the page alone)
 *   tag=<dependency tag>    every entry carrying the tag (GET /cache shows an entry's tags)
 */
import { urlPatternProblem } from '../cache/url-match.js';
import { KNOWN_MODULE_NAMES } from '../mediawiki/modules.js';
import { parsePhpQuery } from '../mediawiki/php-input.js';
import { type Namespaces, titleKey } from '../mediawiki/titles.js';
import { changeFromPurge } from '../policy/changes.js';
import { canonicalQuery } from '../policy/request.js';
import type { PurgeMessage } from '../words/purge-message.js';
import { isApiTarget, parseTarget } from '../words/target.js';

export interface PurgeRequestContext {
  /** WIKIEDGE_API_PATH: URL keys begin with it. */
  readonly apiPath: string;
  /** The wiki's namespaces, to read a title's namespace prefix (titles.ts). */
  readonly namespaces?: Namespaces;
  /** The names of WIKIEDGE_MODULES: modules the operator knows of beyond the table; undefined when not known (no name is refused). */
  readonly operatorModules?: readonly string[];
}

const KINDS = ['all', 'module', 'url', 'prefix', 'pattern', 'title', 'tag'] as const;
const ONE_OF = 'give one of all=1, module=, url=, prefix=, pattern=, title= or tag=';

/** $wgLegalTitleChars' complement that a title text can hold: MediaWikiTitleCodec refuses these. */
const ILLEGAL_TITLE_CHARS = /[#<>[\]|{}\u0000-\u001f\u007f\ufffd]/;
/** MediaWiki's limit on a title's DB key, in bytes (Title::MAX_TITLE_LENGTH). */
const MAX_TITLE_BYTES = 255;
/** The shapes of dependency tags (policy/dependencies.ts): `*`, or `<class letters>:<what>`. */
const TAG_SHAPE = /^(\*|[a-z]{1,3}:.+)$/;
const MAX_TAG_CHARS = 512;

/** The purge a request asks for, or why it is not one (the 400's message). */
export function purgeMessageOf(given: Record<string, unknown>, context: PurgeRequestContext): PurgeMessage | string {
  const named = KINDS.filter((k) => given[k] !== undefined && given[k] !== '');
  if (named.length === 0) return ONE_OF;
  if (named.length > 1) return `${ONE_OF}, not several (${named.map((k) => `${k}=`).join(', ')})`;
  const kind = named[0]!;
  const value = given[kind];
  if (kind === 'all') return value === '1' || value === true || value === 'true' ? { kind: 'all' } : `all=${String(value)}: all=1 purges everything`;
  if (typeof value !== 'string') return `${kind}= must be a string`;
  switch (kind) {
    case 'module':
      return moduleMessage(value, context);
    case 'url': {
      const target = parseTarget(value);
      if (!isApiTarget(target, context.apiPath)) return `url= must be an api.php URL (${context.apiPath}?…), not ${shortened(value)}`;
      return { kind: 'url', urlKey: `${context.apiPath}?${canonicalQuery(parsePhpQuery(target.rawQuery))}` };
    }
    case 'prefix': {
      const start = `${context.apiPath}?`;
      if (!start.startsWith(value) && !value.startsWith(start)) return `prefix= must begin with ${start} (every URL key does), not ${shortened(value)}`;
      return { kind: 'prefix', prefix: value };
    }
    case 'pattern': {
      const problem = urlPatternProblem(value);
      return problem ?? { kind: 'pattern', pattern: value };
    }
    case 'title':
      return titleMessage(value, context);
    case 'tag':
      if (value.length > MAX_TAG_CHARS || !TAG_SHAPE.test(value))
        return `tag=${shortened(value)} is not a dependency tag (\`*\` or \`p:Page_title\`, \`n:0\`, …: GET /cache shows an entry's tags)`;
      return { kind: 'tags', tags: [value] };
  }
}

function moduleMessage(module: string, context: PurgeRequestContext): PurgeMessage | string {
  // The metrics' label for a query submodule is `query+<name>` (its `+` arrives as a space when
  // the query string was not percent-encoded): the same entries.
  const label = /^query[+ ]/.exec(module);
  const name = label ? module.slice(label[0].length) : module;
  if (name === 'multiple' || name === 'other' || name === '') return `module=${module} is a folded metrics label, not one module`;
  // Without WIKIEDGE_MODULES' names (operatorModules undefined) a name outside the table may be
  // the operator's, and is taken as it was before names were checked.
  if (context.operatorModules !== undefined && !KNOWN_MODULE_NAMES.includes(name) && !context.operatorModules.includes(name))
    return `module=${shortened(module)} is not a module of MediaWiki 1.39 or Wikibase, nor one named in WIKIEDGE_MODULES (an extension's module: purge by pattern=)`;
  return { kind: 'module', module: name };
}

/** A page title as MediaWiki reads one (titles.ts): a PURGE of the page, every answer that depends on it. */
function titleMessage(text: string, context: PurgeRequestContext): PurgeMessage | string {
  if (ILLEGAL_TITLE_CHARS.test(text)) return `title=${shortened(text)} holds a character no page title may hold (# < > [ ] | { } or a control character)`;
  const t = titleKey(text, context.namespaces);
  if (t === undefined) return `title=${shortened(text)} names no page`;
  if (Buffer.byteLength(t.key) > MAX_TITLE_BYTES) return `title= is longer than ${MAX_TITLE_BYTES} bytes, which no page title is`;
  // Its subject or talk page's too, as documented above (changes.ts addPage).
  const tags = changeFromPurge(text, context.namespaces, true).tags;
  return { kind: 'tags', tags };
}

/** A value quoted in a refusal, bounded. */
function shortened(value: string): string {
  return value.length > 200 ? `${value.slice(0, 200)}…` : value;
}
