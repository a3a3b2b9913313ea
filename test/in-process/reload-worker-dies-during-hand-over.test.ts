// A reload's hand-over (cluster/supervisor.ts replaceAll) with a worker that dies during it:
// the replacement dying leaves the slot its old worker (capacity never drops below
// WIKIEDGE_WORKERS); the old one dying is not kept among the draining workers for good (every
// scrape and purge would ask a dead worker). A real primary and real workers
// (test/support/supervisor/primary.mjs).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { built } from '../support/spawned.js';

const primary = path.resolve(import.meta.dirname, '../support/supervisor/primary.mjs');
const run = (victim: string) => JSON.parse(execFileSync(process.execPath, [primary, victim], { encoding: 'utf8', timeout: 30_000 }).trim().split('\n').pop()!);

describe.runIf(built)('a worker that dies during the hand-over', () => {
  it('the replacement: the slot keeps its old worker, and the reload says it failed', () => {
    const r = run('replacement');
    expect(r.outcome.replaced).toBe(0);
    expect(r.outcome.failed).toBeDefined();
    expect(r).toMatchObject({ listening: 1, sameWorker: true, alive: true, draining: 0 });
  });

  it('the old one: the replacement serves, and no dead worker is left draining', () => {
    const r = run('old');
    expect(r.outcome).toEqual({ replaced: 1 });
    expect(r).toMatchObject({ listening: 1, sameWorker: false, alive: true, draining: 0 });
  });
});
