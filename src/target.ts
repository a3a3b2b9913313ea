/**
 * Parsing the request target once, for routing. Routing uses a normalised path (dot segments
 * and repeated slashes resolved, unreserved percent-escapes decoded) so that `/w/./api.php`,
 * `//w/api.php` or `/w/%61pi.php` are still recognised as api.php and still lose their debuginfo;
 * only the exact configured path is ever cached. The wiki receives the target as sent.
 */
import type { RequestTarget } from './gateway.js';

/** RFC 3986 §2.3 unreserved characters may be decoded without changing meaning. */
function decodeUnreserved(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (m, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(c) ? c : m;
  });
}

/** RFC 3986 §5.2.4 remove_dot_segments, plus collapsing `//`. */
function normalisePath(path: string): string {
  const out: string[] = [];
  for (const seg of decodeUnreserved(path).split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  const trailing = path.endsWith('/') && out.length > 0 ? '/' : '';
  return `/${out.join('/')}${trailing}`;
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
  const q = upstreamPath.indexOf('?');
  const rawPath = q === -1 ? upstreamPath : upstreamPath.slice(0, q);
  let rawQuery = q === -1 ? '' : upstreamPath.slice(q + 1);
  const hash = rawQuery.indexOf('#');
  if (hash !== -1) rawQuery = rawQuery.slice(0, hash);
  // Most paths need no normalising: skip the work unless a `%`, `/.` or `//` is present.
  const plain = !rawPath.includes('%') && !rawPath.includes('/.') && !rawPath.includes('//');
  return { path: plain ? rawPath : normalisePath(rawPath), rawPath, rawQuery, upstreamPath };
}

export function isApiTarget(target: RequestTarget, apiPath: string): boolean {
  return target.path === apiPath || target.path.startsWith(`${apiPath}/`);
}
