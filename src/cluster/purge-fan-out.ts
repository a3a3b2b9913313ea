/**
 * A purge in a cluster reaches every worker, each holding its own local tier:
 *
 * - an admin POST /purge: one worker (the leader, the first listening) purges Redis, publishes
 *   on its channel and purges its local tier, once, so that Redis and its channel see one purge,
 *   not one per worker; every other worker purges its local tier. Without Redis the order does
 *   not matter. With Redis the others purge both before the leader and after it: before, so that
 *   the copies they hold are counted in the answer (the leader's message on the channel would
 *   otherwise remove them unseen, and their purge after it find nothing: the answer under-counted
 *   by every other worker's copies); after, so that a copy refilled from Redis between their
 *   first purge and the leader's goes too, even if the channel did not carry the message.
 * - a worker's own purge (PURGE, a logout, a session holder's write) without Redis: it has
 *   applied it already and tells the primary (messages.ts's siblings-purge), which relays it to
 *   every other worker's local tier.
 *
 * The admin's answer says what was removed and how many workers did not answer (their entries
 * may still be there): purgeOutcome, arithmetic over the answers alone.
 */
import type { Logger } from 'pino';
import type { AdminPurgeResult } from '../apps/admin.js';
import type { PurgeMessage, PurgeResult } from '../cache/purge.js';

/** How long a purge waits for each worker (prefix, module and `all` purges walk its whole local tier). */
export const PURGE_ASK_MS = 30_000;

/** Ask one worker to purge: Redis and its local tier (everywhere), or its local tier only. */
export type AskPurge<W> = (worker: W, message: PurgeMessage, everywhere: boolean) => Promise<PurgeResult>;

export class PurgeFanOut<W extends { readonly id: number }> {
  constructor(
    private readonly askPurge: AskPurge<W>,
    /** WIKIEDGE_REDIS_URL is set: a purge must reach Redis, and the answer says if it did. */
    private readonly withRedis: boolean,
    private readonly log: Logger,
  ) {}

  /** An admin purge: with Redis, every other worker, the leader (Redis), every other worker again; without, the leader and the others. */
  async purge(workers: readonly W[], message: PurgeMessage): Promise<AdminPurgeResult> {
    const [leader, ...others] = workers;
    const before = this.withRedis ? await this.purgeLocally(others, message) : undefined;
    const led = leader && (await settled(this.askPurge(leader, message, true)));
    if (led?.status === 'rejected') this.missed(leader!, led.reason, 'purge: a worker did not answer');
    const after = await this.purgeLocally(others, message);
    return purgeOutcome(led, before ? after.map((r, i) => sumOf(before[i]!, r)) : after, this.withRedis);
  }

  /** Each worker's local tier, its answer or its failure. */
  private async purgeLocally(workers: readonly W[], message: PurgeMessage): Promise<PromiseSettledResult<PurgeResult>[]> {
    const answers = await Promise.allSettled(workers.map((w) => this.askPurge(w, message, false)));
    answers.forEach((r, i) => {
      if (r.status === 'rejected') this.missed(workers[i]!, r.reason, 'purge: a worker did not answer');
    });
    return answers;
  }

  /**
   * A worker's own purge, for every other worker's local tier (it has applied it already);
   * settles once every other worker has answered or failed to.
   */
  async relay(workers: readonly W[], from: W, message: PurgeMessage): Promise<void> {
    await Promise.all(
      workers
        .filter((worker) => worker !== from)
        .map((worker) =>
          this.askPurge(worker, message, false).then(
            () => undefined,
            (err: unknown) => this.missed(worker, err, 'purge from a sibling: a worker did not answer'),
          ),
        ),
    );
  }

  private missed(worker: W, err: unknown, msg: string): void {
    this.log.warn({ worker: worker.id, err: String(err) }, msg);
  }
}

/**
 * The admin's answer from the workers' answers.
 * @param leader the answer of the worker that purged Redis; undefined when no worker listens
 * @param others the answers of every other worker, which purged their local tier only
 */
export function purgeOutcome(
  leader: PromiseSettledResult<PurgeResult> | undefined,
  others: readonly PromiseSettledResult<PurgeResult>[],
  withRedis: boolean,
): AdminPurgeResult {
  const answers = [...(leader ? [leader] : []), ...others];
  const answered = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  // Redis's count comes from the leader alone; null says Redis may not have been purged.
  const redisPurged = leader?.status === 'fulfilled' ? leader.value.redisPurged : withRedis ? null : undefined;
  // The other replicas' count too: the leader asked them (cache/purge.ts countReplicas).
  const replicas = leader?.status === 'fulfilled' ? leader.value.replicas : undefined;
  return {
    purged: answered.reduce((sum, r) => sum + r.purged, 0),
    ...(redisPurged !== undefined && { redisPurged }),
    ...(replicas && { replicas }),
    workers: answered.length,
    missedWorkers: answers.length - answered.length,
  };
}

/** One worker's two answers as one: failed if either failed (its entries may still be there). */
function sumOf(a: PromiseSettledResult<PurgeResult>, b: PromiseSettledResult<PurgeResult>): PromiseSettledResult<PurgeResult> {
  if (a.status === 'rejected') return a;
  if (b.status === 'rejected') return b;
  return { status: 'fulfilled', value: { purged: a.value.purged + b.value.purged } };
}

function settled<T>(p: Promise<T>): Promise<PromiseSettledResult<T>> {
  return p.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}
