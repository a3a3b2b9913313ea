// The admin listener's inspection and purges, as tests call them: with its token, JSON parsed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { http, type TestResponse } from './http.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/** A GET of the admin listener with the token. */
export function adminGet(adminUrl: string, path: string, token = ADMIN_TOKEN): Promise<TestResponse> {
  return http(`${adminUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

/** A POST of the admin listener with the token, its body JSON. */
export function adminPost(adminUrl: string, path: string, body: unknown = {}, token = ADMIN_TOKEN): Promise<TestResponse> {
  return http(`${adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * A wiki answering every api.php request with JSON that the gateway stores: public for an
 * anonymous request, `private` (kept in the session's slot) for one carrying a session cookie,
 * as ApiMain::sendCacheHeaders answers. Counts what it was asked, by query.
 */
export function answerPublicOrSessionPrivate(asked: Map<string, number>) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const query = (req.url ?? '').split('?')[1] ?? '';
    asked.set(query, (asked.get(query) ?? 0) + 1);
    const session = /_session=/.test(req.headers.cookie ?? '');
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': session ? 'private, must-revalidate, max-age=300' : 's-maxage=300, max-age=300, public',
      vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
    });
    res.end(JSON.stringify({ batchcomplete: true, query: { pages: [{ ns: 0, title: 'Main Page', missing: false }] } }));
  };
}
