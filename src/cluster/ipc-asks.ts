/**
 * The primary's end of ask / answer (messages.ts): a question to one worker becomes a promise
 * that settles with the worker's answer, or fails when the worker says it failed, does not
 * answer within the time given, cannot be sent to, or exits first. Nothing waits forever on a
 * worker: the admin listener's /metrics and POST /purge are built on these promises.
 *
 * It sees a worker only as something with an id that messages can be sent to (AskPeer), so
 * that it can be tested without forking; the supervisor hands it every answer it receives
 * (answered) and every worker that exits (abandon).
 */
import { type AnswerMessage, type AnswerTo, type Ask, type AskMessage } from './messages.js';

/** What this needs of a cluster Worker. */
export interface AskPeer {
  readonly id: number;
  send(message: AskMessage, callback: (error: Error | null) => void): boolean;
}

interface Pending<W> {
  readonly worker: W;
  readonly settle: (answer: AnswerMessage) => void;
}

export class IpcAsks<W extends AskPeer> {
  private readonly pending = new Map<number, Pending<W>>();
  private nextId = 1;

  /** Ask one worker; rejects with `worker <id>: <why>` if no answer comes in timeoutMs. */
  ask<A extends Ask>(worker: W, ask: A, timeoutMs: number): Promise<AnswerTo<A>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle({ wikiedge: 'answer', id, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
      const settle = (a: AnswerMessage) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (a.error !== undefined) reject(new Error(`worker ${worker.id}: ${a.error}`));
        else resolve(a.value as AnswerTo<A>);
      };
      this.pending.set(id, { worker, settle });
      worker.send({ wikiedge: 'ask', id, ask } satisfies AskMessage, (err: Error | null) => {
        if (err) settle({ wikiedge: 'answer', id, error: err.message });
      });
    });
  }

  /** An answer came in; one to an ask that already gave up is dropped. */
  answered(answer: AnswerMessage): void {
    this.pending.get(answer.id)?.settle(answer);
  }

  /** The worker exited: what it was asked fails now rather than at its timeout. */
  abandon(worker: W): void {
    for (const [id, p] of this.pending) {
      if (p.worker === worker) p.settle({ wikiedge: 'answer', id, error: 'worker exited' });
    }
  }

  /** Asks still waiting for an answer. */
  get waiting(): number {
    return this.pending.size;
  }
}
