// Waiting on state, never on time: the suite runs on busy machines.
import { setTimeout as sleep } from 'node:timers/promises';

/** The first value of `read` that satisfies `fresh`, within `boundMs` (generous for busy machines). */
export async function until<T>(read: () => Promise<T>, fresh: (t: T) => boolean, boundMs = 15_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const value = await read();
    if (fresh(value)) return value;
    if (Date.now() - t0 > boundMs) throw new Error(`not fresh after ${boundMs} ms: ${JSON.stringify(value).slice(0, 300)}`);
    await sleep(50);
  }
}
