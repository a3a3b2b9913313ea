// The load the reload tests run through a SIGHUP: kept-alive clients and clients opening a
// connection per request, each sending until the reload has completed and then AFTER_RELOAD more,
// however long a busy machine takes (outcomes are counted, never timed); and the wiki they ask:
// shared answers (hits), private ones (passes) and pages streamed through, counted by kind and client.
import { Client, request } from 'undici';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

/** Requests every client still sends once the reload has completed. */
export const AFTER_RELOAD = 20;

export interface Outcomes {
  readonly statuses: Record<string, number>;
  readonly errors: Record<string, number>;
  /** Which process answered: the per-process prefix of generated request ids. */
  readonly servedBy: Set<string>;
}

export interface LoadPhase {
  /** Set by the test once the reload has completed. */
  reloaded: boolean;
  /** Requests the kept-alive clients have sent so far. */
  sentKeepAlive: number;
  /** Requests each client has had answered (or failed) so far, kept-alive ones first. */
  readonly sentBy: number[];
}

/** Connections the kept-alive clients opened, and lost without closing them themselves. */
export interface KeptConnections {
  opened: number;
  lost: number;
}

export interface Load {
  readonly outcomes: Outcomes;
  readonly phase: LoadPhase;
  readonly connections: KeptConnections;
  /** Settles when every client has sent its AFTER_RELOAD requests after the reload. */
  readonly done: Promise<unknown>;
}

export function reloadWiki(asked = new Map<string, number>()): Promise<FakeUpstream> {
  return startFakeUpstream((req, res) => {
    const url = req.url ?? '/';
    const params = new URL(url, 'http://wiki').searchParams;
    const asking = `${params.get('kind')} ${params.get('c')}`;
    asked.set(asking, (asked.get(asking) ?? 0) + 1);
    if (url.includes('kind=hit')) {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    } else if (url.includes('kind=pass')) {
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
          res.end('{"batchcomplete":true}');
        },
        5 + Math.floor(Math.random() * 20),
      );
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>');
      setTimeout(() => res.end('</html>'), 10);
    }
  });
}

/**
 * The five shared answers the clients ask for (asked of the wiki as `hit <c>`). siprop=namespaces:
 * siteinfo's default siprop (general) carries the wiki's clock, whose answers live
 * WIKIEDGE_TTL_CLOCK_SECONDS (2 s, src/policy/dependencies.ts carriesClock): on a busy machine
 * they would expire before the reload, and be asked again for that reason alone.
 */
export const hitPath = (c: number): string => `/w/api.php?action=query&meta=siteinfo&siprop=namespaces&format=json&kind=hit&c=${c % 5}`;

function pathFor(n: number, i: number): string {
  const paths = [hitPath(n), `/w/api.php?action=query&list=filearchive&format=json&kind=pass&c=${n}`, `/w/index.php?title=Main_Page&kind=stream&c=${n}`];
  return paths[i % paths.length]!;
}

function count(o: Outcomes, status: number | undefined, error: string | undefined, requestId: unknown): void {
  if (status !== undefined) o.statuses[status] = (o.statuses[status] ?? 0) + 1;
  if (error !== undefined) o.errors[error] = (o.errors[error] ?? 0) + 1;
  if (typeof requestId === 'string') o.servedBy.add(requestId.split('-')[0]!);
}

const errorCode = (err: unknown): string => (err as { code?: string }).code ?? (err as Error).name;

export function startLoad(url: string, clients: { readonly keepAlive: number; readonly newConnections: number }): Load {
  const outcomes: Outcomes = { statuses: {}, errors: {}, servedBy: new Set() };
  const phase: LoadPhase = { reloaded: false, sentKeepAlive: 0, sentBy: Array.from({ length: clients.keepAlive + clients.newConnections }, () => 0) };
  const connections: KeptConnections = { opened: 0, lost: 0 };
  const keepAlive = async (n: number) => {
    const client = new Client(url, { keepAliveTimeout: 30_000 });
    client.on('connect', () => connections.opened++);
    client.on('disconnect', () => connections.lost++);
    let after = 0;
    try {
      for (let i = n; after < AFTER_RELOAD; i++) {
        if (phase.reloaded) after++;
        try {
          const res = await client.request({ method: 'GET', path: pathFor(n, i) });
          await res.body.text();
          count(outcomes, res.statusCode, undefined, res.headers['x-request-id']);
        } catch (err) {
          count(outcomes, undefined, errorCode(err), undefined);
        }
        phase.sentKeepAlive++;
        phase.sentBy[n]!++;
      }
    } finally {
      client.removeAllListeners('disconnect');
      await client.close();
    }
  };
  const newConnections = async (n: number) => {
    let after = 0;
    for (let i = n; after < AFTER_RELOAD; i++) {
      if (phase.reloaded) after++;
      try {
        const res = await request(`${url}${pathFor(n, i)}`, { headers: { connection: 'close' } });
        await res.body.text();
        count(outcomes, res.statusCode, undefined, res.headers['x-request-id']);
      } catch (err) {
        count(outcomes, undefined, errorCode(err), undefined);
      }
      phase.sentBy[n]!++;
    }
  };
  const done = Promise.all([
    ...Array.from({ length: clients.keepAlive }, (_, n) => keepAlive(n)),
    ...Array.from({ length: clients.newConnections }, (_, n) => newConnections(clients.keepAlive + n)),
  ]);
  return { outcomes, phase, connections, done };
}
