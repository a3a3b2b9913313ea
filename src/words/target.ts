/**
 * Parsing the request target once, for routing.
 *
 * Whether a target is api.php is decided the way the wiki's web server decides which script runs
 * (so that every target that reaches api.php loses its debuginfo and cookies): the path is
 * percent-decoded (`%2F` and `%2E` included, and a second time for servers stacked on one
 * another), `\` is a `/`, repeated slashes merge, dot segments resolve, and the comparison
 * ignores case (a server on a case-insensitive file system, PATH_INFO after the script name).
 * Only the exact configured path is ever cached; the wiki receives the target as sent.
 */

/** Where a request is going, computed once per request. */
export interface RequestTarget {
  /** The path as a server routes it: decoded, normalised, lower case (for routing only). */
  readonly path: string;
  /** The path exactly as received. */
  readonly rawPath: string;
  /** The query string as received, without `?` (and without a fragment). */
  readonly rawQuery: string;
  /** The origin-form target forwarded to the wiki, byte for byte as received. */
  readonly upstreamPath: string;
  /**
   * The target holds `#`. RFC 9112 §3.2: a request-target has no fragment. Servers cut it off
   * wherever it stands (php -S: `/w/api.php#x?action=query` runs api.php with no query at all),
   * so its meaning depends on the server: refused (400).
   */
  readonly hasFragment: boolean;
}

const HEX_ESCAPE = /%([0-9A-Fa-f]{2})/g;

/** Every `%XX`, twice at most (a proxy that decodes in front of a server that decodes again). */
function decodeAll(path: string): string {
  let out = path;
  for (let round = 0; round < 2 && out.includes('%'); round++) {
    out = out.replace(HEX_ESCAPE, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
  return out;
}

/** RFC 3986 §5.2.4 remove_dot_segments, plus merging `//` and reading `\` as `/`. */
function normalisePath(path: string): string {
  const decoded = decodeAll(path).replace(/\\/g, '/');
  const out: string[] = [];
  for (const seg of decoded.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  const trailing = decoded.endsWith('/') && out.length > 0 ? '/' : '';
  return `/${out.join('/')}${trailing}`.toLowerCase();
}

/** Origin-form from whatever the request line carried (absolute-form is what PURGE senders use). */
export function originForm(url: string): string {
  if (url.startsWith('/')) return url;
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (m) {
    const rest = url.slice(m[0].length);
    return rest.startsWith('/') ? rest : `/${rest}`;
  }
  return url === '*' ? '/' : `/${url}`;
}

export function parseTarget(url: string): RequestTarget {
  const upstreamPath = originForm(url);
  const hash = upstreamPath.indexOf('#');
  const withoutFragment = hash === -1 ? upstreamPath : upstreamPath.slice(0, hash);
  const q = withoutFragment.indexOf('?');
  const rawPath = q === -1 ? withoutFragment : withoutFragment.slice(0, q);
  const rawQuery = q === -1 ? '' : withoutFragment.slice(q + 1);
  // Most paths need no normalising beyond case: skip the work unless a `%`, `\`, `/.` or `//` is present.
  const plain = !rawPath.includes('%') && !rawPath.includes('\\') && !rawPath.includes('/.') && !rawPath.includes('//');
  return {
    path: plain ? rawPath.toLowerCase() : normalisePath(rawPath),
    rawPath,
    rawQuery,
    upstreamPath,
    hasFragment: hash !== -1,
  };
}

/** api.php, or a path a server runs api.php for (PATH_INFO: `/w/api.php/anything`). */
export function isApiTarget(target: RequestTarget, apiPath: string): boolean {
  const api = apiPath.toLowerCase();
  return target.path === api || target.path.startsWith(`${api}/`);
}

/**
 * A query string that begins with `?` (`/w/api.php??action=parse`) means different things to
 * different servers: php -S drops the extra `?` and runs the action (its URL parser skips `?`
 * at the start of the query), Apache and nginx hand PHP `?action=parse`, a parameter named
 * `?action` (the help page). No key could be right for both: such requests are never cached.
 */
export function queryIsAmbiguous(rawQuery: string): boolean {
  return rawQuery.charCodeAt(0) === 0x3f;
}

/**
 * A target longer than WIKIEDGE_MAX_URL_BYTES gets 414, on every path that sees it (the fresh-hit
 * path leaves such targets to the full one). The byte length is only measured when the UTF-16
 * length says it could be over: a character takes at most 3 bytes in the request line.
 */
export function targetTooLong(url: string, maxUrlBytes: number): boolean {
  return url.length > maxUrlBytes / 3 && Buffer.byteLength(url) > maxUrlBytes;
}
