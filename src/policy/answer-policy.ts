/**
 * One answer's cache policy, asked once: built from what the wiki answered (status, headers read
 * once: Cache-Control, Set-Cookie, Vary, MediaWiki-API-Error) and the request's facts (who asks,
 * the module table's rule, whether our smaxage probe went with it), it answers "store? in which
 * tier? how long? with which headers? and if not, why?" in the manner of http-cache-semantics'
 * `CachePolicy` (`storable()`, `timeToLive()`, `responseHeaders()`). Pure: the clock, the jitter's
 * randomness and the dependency facts are handed in.
 *
 * The questions are asked in the order their facts become known, each one the next amendment
 * of the same verdict (policy.ts):
 *   the headers      storeVerdict: status, API error, Set-Cookie, no-store, Vary, tier, TTL
 *   the body         finalVerdict: size, debuginfo, credential echo, requester's address, cookies
 *   the dependencies dependencyVerdict: invalidated while fetched, the wiki's clock, expiries
 * The dependencies are read (policy/dependencies.ts, which may parse the body) only when the
 * verdict is still to store by then.
 *
 * Both the miss path (stored, or not) and the pass path (relayed only: `path: 'pass'`, whose
 * headers are rewritten for the client and whose verdict is never asked) build one.
 */
import type { Identity } from '../mediawiki/identity.js';
import type { ModuleRule } from '../config/config.js';
import type { CacheMode, NoStoreReason, Tier } from '../words/outcomes.js';
import {
  dependencyVerdict,
  finalVerdict,
  type HeaderFacts,
  headerFacts,
  type InspectedFacts,
  responseHeaders,
  type ResponseVerdict,
  storeVerdict,
  type TtlSettings,
  type UpstreamAnswer,
  varyOnAcceptEncoding,
} from './policy.js';

/** What the policy needs of the configuration, built once per gateway (gateway/gateway.ts). */
export interface PolicySettings {
  /** WIKIEDGE_TTL_MAX_SECONDS. */
  readonly ttlMaxSeconds: number;
  /** WIKIEDGE_TTL_JITTER_RATIO. */
  readonly ttlJitterRatio: number;
  /** WIKIEDGE_TTL_CLOCK_SECONDS: the longest an answer carrying the wiki's clock is kept. */
  readonly ttlClockSeconds: number;
  /** WIKIEDGE_CACHE_MAX_ENTRY_BYTES. */
  readonly maxEntryBytes: number;
}

export interface AnswerContext {
  readonly requester: Identity;
  readonly rule: ModuleRule;
  /** The wiki was asked with our smaxage probe (request.ts shouldProbe): undone for the client. */
  readonly probed: boolean;
  /** The client sent its own `smaxage` (policy.ts storeVerdict: it lengthens no shared entry). */
  readonly clientSmaxage?: boolean;
  /** The key holds the request's Origin header (the query has `origin`); else an answer varying on it is not stored (policy.ts storeVerdict). */
  readonly originKeyed?: boolean;
  /** `store`: a miss or a refresh, whose answer may be kept; `pass`: relayed, never stored. */
  readonly path: 'store' | 'pass';
  /** The default TTLs the change signals allow for this request (invalidation/signals.ts ttlDefaults). */
  readonly defaults: Pick<TtlSettings, 'ttlPublicSeconds' | 'ttlSessionSeconds'>;
  readonly settings: PolicySettings;
  readonly random: () => number;
}

/** What only the body tells (steps/ask-wiki.ts inspect), the size included. */
export type BodyFacts = Omit<InspectedFacts, 'maxEntryBytes'>;

/** What the answer depends on (policy/dependencies.ts), and whether a change reached it while it was fetched. */
export interface DependencyFacts {
  readonly clock: boolean;
  readonly expiresAt?: number;
  readonly invalidatedMeanwhile: boolean;
}

/** The verdict: where and how long, with the dependency facts it was decided on; or why not. */
export type AnswerVerdict<D extends DependencyFacts> =
  | { readonly store: true; readonly tier: Tier; readonly mode: CacheMode; readonly ttlMs: number; readonly dependencies: D }
  | { readonly store: false; readonly reason: NoStoreReason; readonly mode: CacheMode };

type Headers = Record<string, string | string[]>;

export class AnswerPolicy {
  private readonly facts: HeaderFacts;
  private byHeaders: ResponseVerdict | undefined;
  private client: Headers | undefined;

  constructor(
    private readonly answer: UpstreamAnswer,
    private readonly context: AnswerContext,
  ) {
    this.facts = headerFacts(answer);
  }

  /** The mode MediaWiki chose for this requester (ApiMain::sendCacheHeaders), read back from its headers. */
  get mode(): CacheMode {
    return this.facts.mode;
  }

  /** What the headers alone allow (policy.ts storeVerdict), asked once. */
  storable(): ResponseVerdict {
    const c = this.context;
    return (this.byHeaders ??= storeVerdict(
      this.facts,
      c.requester,
      c.rule,
      c.defaults,
      c.settings,
      c.random,
      c.clientSmaxage === true,
      c.originKeyed === true,
    ));
  }

  /**
   * The verdict once the body is known: the headers' verdict amended by the body's facts, then
   * by the answer's dependencies, which `dependencies` is called for only while the answer is
   * still to be stored.
   */
  verdict<D extends DependencyFacts>(body: BodyFacts, dependencies: () => D, now: number): AnswerVerdict<D> {
    // A literal, not a spread of `body` followed by another property, which V8 builds in its
    // runtime rather than its fast object copy: the largest cost of a miss's policy
    // (bench/micro-miss.mjs answerPolicy).
    const amended = finalVerdict(this.storable(), {
      complete: body.complete,
      bodyBytes: body.bodyBytes,
      maxEntryBytes: this.context.settings.maxEntryBytes,
      debuginfoKept: body.debuginfoKept,
      echoesCredentials: body.echoesCredentials,
      holdsRequesterAddress: body.holdsRequesterAddress,
      fetchedWithClientCookies: body.fetchedWithClientCookies,
    });
    if (!amended.store) return amended;
    const deps = dependencies();
    const final = dependencyVerdict(amended, deps, deps.invalidatedMeanwhile, this.context.settings.ttlClockSeconds, now);
    return final.store ? { store: true, tier: final.tier, mode: final.mode, ttlMs: final.ttlMs, dependencies: deps } : final;
  }

  /**
   * The headers the client gets (policy.ts responseHeaders): as the wiki would have sent them
   * for the client's own request; an answer kept in a session's slot never says `public`.
   */
  responseHeaders(): Headers {
    const c = this.context;
    return (this.client ??= responseHeaders(
      this.answer.headers,
      { probed: c.probed, perSession: c.path === 'store' && c.requester.kind === 'session' },
      this.facts,
    ));
  }

  /** The headers an entry is stored with: the client's, and Vary: Accept-Encoding when it is stored compressed. */
  storedHeaders(coding: 'identity' | 'gzip'): Headers {
    return coding === 'gzip' ? varyOnAcceptEncoding(this.responseHeaders()) : this.responseHeaders();
  }
}
