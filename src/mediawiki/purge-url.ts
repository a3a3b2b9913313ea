/**
 * The page a CDN PURGE names. MediaWiki sends, for every edit, create, delete, move and upload
 * (and from HTMLCacheUpdate jobs for every page that transcludes a changed template), a PURGE of
 * each URL HtmlCacheUpdater::getUrls() gives for the page, expanded with $wgInternalServer
 * (CdnCacheUpdate::naivePurge). The forms (test/unit/invalidation-purge-urls.test.ts):
 *
 *   {server}{script}/{T}                       view, $wgArticlePath = "$wgScript/$1" (php -S, mod_php)
 *   {server}{article path with $1 = T}         view, short URLs (e.g. /wiki/$1)
 *   {server}{script}?title={T}&action=history  history (a direct revision change)
 *   {server}{script}?title={T}&action=raw&ctype=…     JS/CSS/JSON pages
 *   {server}{script}?title={T}                 view, $wgArticlePath = "$wgScript?title=$1" (php-fpm)
 *   {server}{upload path}/h/hh/{File}          the file itself (and /archive/…/{ts}!{File},
 *                                              /thumb/h/hh/{File}/{w}px-…): File:{File}
 *
 * {T} is wfUrlencode of the prefixed DB key (`_` for spaces; `;@$!*(),/~:` left as they are),
 * file names rawurlencoded. Any spelling decodes to the same key (titles.ts), so encoded variants
 * a client or another proxy writes map to the same page. The host is not compared: a PURGE is
 * only taken from WIKIEDGE_PURGE_ALLOW.
 */
import { parsePhpQuery, phpTextParam } from './php-input.js';
import { originForm } from '../words/target.js';

export interface PurgePaths {
  /** The wiki's index.php path, e.g. /w/index.php ($wgScript). */
  readonly script: string;
  /** $wgArticlePath, e.g. /wiki/$1 (or /w/index.php/$1, already covered by `script`). */
  readonly articlePath: string;
  /** $wgUploadPath, e.g. /w/images. */
  readonly uploadPath: string;
}

/** The prefixed text of the page the URL names (`Talk:Foo bar`, `File:X.png`), or undefined. */
export function purgedTitle(url: string, paths: PurgePaths): string | undefined {
  const target = originForm(url);
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q + 1);
  const text = (encoded: string) => spaced(percentDecode(encoded));
  if (path === paths.script || path === `${paths.script}/`) {
    const title = phpTextParam(parsePhpQuery(query), 'title');
    return title ? spaced(title) : undefined;
  }
  if (path.startsWith(`${paths.script}/`)) return nonEmpty(text(path.slice(paths.script.length + 1)));
  const dollar = paths.articlePath.indexOf('$1');
  if (dollar !== -1) {
    const before = paths.articlePath.slice(0, dollar);
    const after = paths.articlePath.slice(dollar + 2);
    if (before.length > 1 && path.startsWith(before) && path.endsWith(after) && path.length > before.length + after.length)
      return nonEmpty(text(path.slice(before.length, path.length - after.length)));
  }
  if (path.startsWith(`${paths.uploadPath}/`)) return fileOf(path.slice(paths.uploadPath.length + 1));
  return undefined;
}

/**
 * FileRepo paths under $wgUploadPath: h/hh/Name, archive/h/hh/ts!Name, thumb/h/hh/Name/…,
 * thumb/archive/h/hh/ts!Name/…, and the deleted and temp zones, which hold no page.
 */
function fileOf(rest: string): string | undefined {
  let parts = rest.split('/');
  if (parts[0] === 'thumb') parts = parts.slice(1);
  const archived = parts[0] === 'archive';
  if (archived) parts = parts.slice(1);
  if (parts.length < 3 || !/^[0-9a-f]$/.test(parts[0]!) || !/^[0-9a-f]{2}$/.test(parts[1]!)) return undefined;
  let name = percentDecode(parts[2]!);
  if (archived) name = name.slice(name.indexOf('!') + 1);
  return name ? `File:${spaced(name)}` : undefined;
}

/** Decode every %XX (UTF-8), leaving a malformed sequence as it is. */
function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/(%[0-9A-Fa-f]{2})+/g, (m) => {
      try {
        return decodeURIComponent(m);
      } catch {
        return m;
      }
    });
  }
}

function spaced(s: string): string {
  return s.replace(/_/g, ' ');
}

function nonEmpty(s: string): string | undefined {
  return s.trim() === '' ? undefined : s;
}
