// In-process stand-ins for the wiki, for faults a real wiki cannot produce on demand.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { http } from './http.js';

export interface FakeUpstream {
  readonly url: string;
  readonly server: Server;
  readonly requests: IncomingMessage[];
  openSockets(): number;
  close(): Promise<void>;
}

export async function startFakeUpstream(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<FakeUpstream> {
  const requests: IncomingMessage[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    requests,
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A stand-in wiki that answers with `answer`, except that each request `holds` picks waits until
 * the test lets it go: `held` has one function per held request, in arrival order (calling it
 * again, or after its client left, does nothing).
 */
export async function startHoldingUpstream(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
  holds: (req: IncomingMessage) => boolean = () => true,
): Promise<FakeUpstream & { readonly held: (() => void)[] }> {
  const held: (() => void)[] = [];
  const fake = await startFakeUpstream((req, res) => {
    const send = () => {
      if (!res.headersSent && !res.destroyed) answer(req, res);
    };
    if (holds(req)) held.push(send);
    else send();
  });
  return { ...fake, held };
}

/** A private JSON answer, `{}`. */
export function answerPrivate(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
  res.end('{}');
}

/** A wiki answering public (shared-cacheable) JSON that echoes the request headers it received. */
export function answerPublicEchoingHeaders(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 's-maxage=60, max-age=60, public',
    vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  });
  res.end(JSON.stringify({ headers: req.headers, url: req.url }));
}

/** A wiki answering `body` as public JSON any cache may keep for 300 s, with the Vary MediaWiki's API sends. */
export function answerPublic(body: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 's-maxage=300, max-age=300, public',
      vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
    });
    res.end(body);
  };
}

/** The request headers the wiki saw, from an answer of answerPublicEchoingHeaders. */
export function echoedHeaders(res: { body: string }): Record<string, string> {
  return (JSON.parse(res.body) as { headers: Record<string, string> }).headers;
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/**
 * A stand-in wiki's handler whose `action=clientlogin` POST logs `user` in with a session of its
 * own each time (MediaWiki renews the session id at login, and sets `{prefix}UserName` with it);
 * every other request is answered by `otherwise`.
 */
export function answerLoginsAs(
  user: string,
  otherwise: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.method !== 'POST' || !req.url?.includes('clientlogin')) return otherwise(req, res);
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'private, must-revalidate, max-age=0',
      'set-cookie': [`wiki_session=${randomBytes(16).toString('hex')}; path=/; HttpOnly`, `wikiUserName=${encodeURIComponent(user)}; path=/`],
    });
    res.end(JSON.stringify({ clientlogin: { status: 'PASS', username: user } }));
  };
}

/**
 * A clientlogin POST through the gateway at `apiUrl` to a wiki answering with answerLoginsAs:
 * the Cookie header of the session it set (and the user name cookie, as a browser sends it back).
 */
export async function loginThrough(apiUrl: string, user: string): Promise<string> {
  const res = await http(`${apiUrl}?action=clientlogin&format=json`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `username=${encodeURIComponent(user)}&password=x&logintoken=%2B%5C`,
  });
  return `${String((res.headers['set-cookie'] as string[])[0]).split(';')[0]}; wikiUserName=${encodeURIComponent(user)}`;
}
