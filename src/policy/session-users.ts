/**
 * Which sessions belong to which user, learned from answers the gateway already sees (never
 * guessed): `meta=userinfo` names the session's user, a login's answer (`action=login`
 * lgusername, `action=clientlogin` username) the user it just logged in. A rights or block log
 * row for User:Name then ends the cached answers of Name's sessions (changes.ts): they were made
 * with the rights Name had before.
 *
 * Bounded: at most `maxSlots` sessions remembered, the least recently seen forgotten first, and
 * at most `maxSlotsPerUser` per user, so that one account logging in again and again neither
 * pushes everyone else out nor makes each of its writes evict an unbounded list (commit e744978,
 * test/in-process/attack-session-list-amplification.test.ts: 30,000 logins made each POST of that account take 1-2 s, and stalled the others).
 * A session is seen when it is learned and whenever its answer is stored (inUse). A forgotten
 * session's answers stored while it was known still end with its user's purge: they carry the
 * user (dependencies.ts userTag; test/in-process/a-users-write-ends-sessions-no-longer-listed.test.ts).
 * Those stored before it was learned, or after it was forgotten, live until their session TTL.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { identityAfterAnswer, type IdentityRules } from '../mediawiki/identity.js';
import { parseSetCookie } from '../mediawiki/set-cookie.js';

/**
 * The sessions of one user remembered (here and in Redis' list): a person's browsers and bots,
 * with room to spare; beyond, the least recently seen (here; any, in Redis) are forgotten (what
 * that leaves cached: the module comment).
 */
export const MAX_SESSIONS_PER_USER = 100;

export class SessionUsers {
  /** slot → user, in the order last seen. */
  private readonly userBySlot = new Map<string, string>();
  private readonly slotsOf = new Map<string, Set<string>>();

  constructor(
    private readonly maxSlots = 100_000,
    private readonly maxSlotsPerUser = MAX_SESSIONS_PER_USER,
  ) {}

  note(slot: string, user: string): void {
    const was = this.userBySlot.get(slot);
    if (was !== undefined) {
      this.userBySlot.delete(slot);
      if (was !== user) this.drop(was, slot);
    }
    this.userBySlot.set(slot, user);
    let slots = this.slotsOf.get(user);
    if (!slots) this.slotsOf.set(user, (slots = new Set()));
    // Most recently seen last: the first is the one to forget.
    slots.delete(slot);
    slots.add(slot);
    if (slots.size > this.maxSlotsPerUser) {
      const oldest = slots.values().next().value as string;
      slots.delete(oldest);
      this.userBySlot.delete(oldest);
    }
    while (this.userBySlot.size > this.maxSlots) {
      const [oldest, owner] = this.userBySlot.entries().next().value as [string, string];
      this.userBySlot.delete(oldest);
      this.drop(owner, oldest);
    }
  }

  /** The user a session belongs to, when this process learned it. */
  userOf(slot: string): string | undefined {
    return this.userBySlot.get(slot);
  }

  /**
   * userOf, for a session in use (its answer is being stored): it becomes the most recently
   * seen, of its user's and of all, so that a session still in use is not the one forgotten
   * when its user logs in again and again (a bot that logs in per task beside a person's
   * browser; test/unit/session-write-purge-reaches-the-users-other-sessions.test.ts).
   */
  inUse(slot: string): string | undefined {
    const user = this.userBySlot.get(slot);
    if (user === undefined) return undefined;
    this.userBySlot.delete(slot);
    this.userBySlot.set(slot, user);
    const slots = this.slotsOf.get(user);
    if (slots) {
      slots.delete(slot);
      slots.add(slot);
    }
    return user;
  }

  slots(user: string): readonly string[] {
    return [...(this.slotsOf.get(user) ?? [])];
  }

  /** [slot, user] pairs, the least recently seen first (a worker's start, cluster/messages.ts). */
  entries(): [string, string][] {
    return [...this.userBySlot];
  }

  get size(): number {
    return this.userBySlot.size;
  }

  private drop(user: string, slot: string): void {
    const slots = this.slotsOf.get(user);
    if (!slots) return;
    slots.delete(slot);
    if (slots.size === 0) this.slotsOf.delete(user);
  }
}

/**
 * The user an answer says a session belongs to: userinfo's name (not an anonymous one), or the
 * name a login answered with. `answer` is the parsed JSON of a json answer.
 */
export function userNamed(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const a = answer as Record<string, { [k: string]: unknown } | undefined>;
  const info = (a['query'] as { userinfo?: { name?: unknown; anon?: unknown; id?: unknown } } | undefined)?.userinfo;
  if (info && typeof info.name === 'string' && info.anon === undefined && info.id !== 0) return info.name;
  const login = a['login'];
  if (login && login['result'] === 'Success' && typeof login['lgusername'] === 'string') return login['lgusername'];
  const client = a['clientlogin'];
  if (client && client['status'] === 'PASS' && typeof client['username'] === 'string') return client['username'];
  return undefined;
}

/**
 * The session an answer leaves its client holding and whose it is, when the answer changes the
 * client's credential cookies: a login gives a new session (MediaWiki renews the session id on
 * login; the session the login request came with is no longer anyone's), and a session may be
 * renewed at any time. The user is the `{prefix}UserName` the wiki sets with it
 * (CookieSessionProvider::persistSession, on every login through api.php or index.php's
 * Special:UserLogin), else `named`: what the answer itself says (a login's user name, userinfo).
 * Undefined when the answer sets no credential cookie or names nobody.
 */
export function sessionAfterAnswer(
  headers: IncomingHttpHeaders,
  setCookies: readonly string[],
  rules: IdentityRules,
  cookiePrefix: string,
  named: string | undefined,
  now: number,
): { slot: string; user: string } | undefined {
  if (setCookies.length === 0) return undefined;
  const set = setCookies.map((line) => parseSetCookie(line, now));
  const after = identityAfterAnswer(headers, set, rules);
  if (after?.kind !== 'session') return undefined;
  const userNameCookie = set.find((cookie) => cookie.name === `${cookiePrefix}UserName` && !cookie.deletion);
  const user = (userNameCookie && decodedUserName(userNameCookie.value)) || named;
  return user === undefined ? undefined : { slot: after.slot, user };
}

/** `{prefix}UserName` as the wiki sent it (WebResponse::setCookie: raw URL encoding); undefined when it does not decode. */
function decodedUserName(value: string): string | undefined {
  try {
    return decodeURIComponent(value) || undefined;
  } catch {
    return undefined;
  }
}
