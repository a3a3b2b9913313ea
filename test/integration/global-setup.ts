// vitest globalSetup for the `integration` project: one throw-away MediaWiki 1.39 for the whole run.
//
// * Default: scripts/wiki/setup.sh --no-debug into a fresh temp dir; teardown: stop.sh --purge.
// * Reuse a wiki that is already running (faster local iteration):
//     eval "$(bash scripts/wiki/setup.sh --data /tmp/my-wiki | sed 's/^/export WIKIEDGE_TEST_/')"
//     npx vitest run --project integration
//   i.e. WIKIEDGE_TEST_WIKI_URL + WIKIEDGE_TEST_WIKI_DATA; that wiki is left running.
// * The packages must be installed already (scripts/install-system-deps.sh).
// Tests read the values with inject('wikiUrl') / inject('wikiData').
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** e.g. http://127.0.0.1:41729 (API at /w/api.php) */
    wikiUrl: string;
    /** the wiki's data folder (lab.json, logs/requests.log, ...) */
    wikiData: string;
  }
}

const execFileP = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const setupScript = path.join(repoRoot, 'scripts/wiki/setup.sh');
const stopScript = path.join(repoRoot, 'scripts/wiki/stop.sh');

async function assertWikiAnswers(wikiUrl: string): Promise<void> {
  const res = await fetch(`${wikiUrl}/w/api.php?action=query&meta=siteinfo&siprop=general&format=json`, {
    headers: { 'X-Wikiedge-Probe': '1' }, // not counted in requests.log
  });
  const body = (await res.json()) as { query?: { general?: { generator?: string } } };
  if (!body.query?.general?.generator?.startsWith('MediaWiki')) {
    throw new Error(`${wikiUrl} is not a MediaWiki: ${JSON.stringify(body).slice(0, 200)}`);
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const reuseUrl = process.env['WIKIEDGE_TEST_WIKI_URL'];
  const reuseData = process.env['WIKIEDGE_TEST_WIKI_DATA'];
  if (reuseUrl || reuseData) {
    if (!reuseUrl || !reuseData) {
      throw new Error('set both WIKIEDGE_TEST_WIKI_URL and WIKIEDGE_TEST_WIKI_DATA, or neither');
    }
    const wikiUrl = reuseUrl.replace(/\/+$/, '');
    await assertWikiAnswers(wikiUrl);
    project.provide('wikiUrl', wikiUrl);
    project.provide('wikiData', path.resolve(reuseData));
    return async () => {};
  }

  const dir = await mkdtemp(path.join(tmpdir(), 'wikiedge-it-'));
  const stop = async (): Promise<void> => {
    await execFileP('bash', [stopScript, dir, '--purge'], { cwd: repoRoot }).catch(() => undefined);
    // stop.sh only purges folders setup.sh marked; the temp dir is ours in any case.
    // A PHP worker that is still exiting may write one more file (its session, SQLite's
    // journal) while the folder is removed: rmdir then fails with ENOTEMPTY, and a throw here
    // fails the whole run after every test passed. Retried; a folder left in /tmp is reported,
    // not fatal.
    if (existsSync(dir))
      await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch((err: unknown) =>
        console.warn(`global-setup: could not remove ${dir}: ${String(err)}`),
      );
  };

  let stdout: string;
  try {
    ({ stdout } = await execFileP('bash', [setupScript, '--data', dir, '--no-debug'], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (err) {
    await stop();
    const e = err as Error & { stderr?: string };
    throw new Error(`scripts/wiki/setup.sh failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^(WIKI_URL|WIKI_DATA)=(.+)$/.exec(line.trim());
    if (m?.[1] && m[2]) values.set(m[1], m[2]);
  }
  const wikiUrl = values.get('WIKI_URL');
  const wikiData = values.get('WIKI_DATA');
  if (!wikiUrl || !wikiData) {
    await stop();
    throw new Error(`unexpected output from scripts/wiki/setup.sh: ${JSON.stringify(stdout)}`);
  }
  project.provide('wikiUrl', wikiUrl);
  project.provide('wikiData', wikiData);
  return stop;
}
