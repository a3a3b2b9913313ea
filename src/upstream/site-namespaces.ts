/**
 * The wiki's namespaces, asked of the wiki itself (`meta=siteinfo&siprop=namespaces|namespacealiases`,
 * straight at the wiki, never through the cache): their names, for title keys, and which hold
 * Wikibase entities (mediawiki/titles.ts Namespaces.entities), for entity dependencies. Every
 * process learns them at start whether or not it follows recentchanges (the follower learns them
 * too), retries until the wiki answers, and asks again now and then: an operator may add a
 * namespace or an extension and reload the wiki, not the gateway.
 */
import type { Logger } from 'pino';
import { type Namespaces, namespacesFromSiteinfo } from '../mediawiki/titles.js';
import type { UpstreamRequest, UpstreamResponse } from './upstream.js';

export const SITEINFO_NAMESPACES = 'action=query&meta=siteinfo&siprop=namespaces%7Cnamespacealiases&format=json&formatversion=2';

export interface NamespaceLearnerOptions {
  readonly upstream: { request(req: UpstreamRequest): Promise<UpstreamResponse> };
  readonly apiPath: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  readonly learned: (ns: Namespaces) => void;
  /** Between failed attempts, and between refreshes once learned. */
  readonly retryMs?: number;
  readonly refreshMs?: number;
}

/** Ask once: the namespaces, or undefined when the wiki could not say. Never throws. */
export async function askNamespaces(options: Pick<NamespaceLearnerOptions, 'upstream' | 'apiPath' | 'timeoutMs'>): Promise<Namespaces | undefined> {
  try {
    const res = await options.upstream.request({
      method: 'GET',
      path: `${options.apiPath}?${SITEINFO_NAMESPACES}`,
      headers: { 'user-agent': 'wikiedge-namespaces', accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return undefined;
    const query = (JSON.parse(text) as { query?: Parameters<typeof namespacesFromSiteinfo>[0] }).query;
    return query?.namespaces ? namespacesFromSiteinfo(query) : undefined;
  } catch {
    return undefined;
  }
}

/** Learn now, retry until learned, refresh after; returns a stop function. */
export function learnNamespaces(options: NamespaceLearnerOptions): () => void {
  const retryMs = options.retryMs ?? 5_000;
  const refreshMs = options.refreshMs ?? 600_000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let known = false;
  const attempt = async () => {
    const ns = await askNamespaces(options);
    if (stopped) return;
    if (ns) {
      if (!known) options.log.info({ entityNamespaces: Object.fromEntries(ns.entities ?? []) }, "learned the wiki's namespaces");
      known = true;
      options.learned(ns);
    }
    timer = setTimeout(() => void attempt(), ns ? refreshMs : retryMs);
    timer.unref();
  };
  void attempt();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
