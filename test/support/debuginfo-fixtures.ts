// Fixtures of test/fixtures/debuginfo (answers of a throw-away lab wiki, see its README.md) and
// what every stripping test asks of a stripped body.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';

/** A fixture by its file name; `.gz` ones decoded. */
export function debuginfoFixture(file: string): Buffer {
  const b = readFileSync(new URL(`../fixtures/debuginfo/${file}`, import.meta.url));
  return file.endsWith('.gz') ? gunzipSync(b) : b;
}

/** Nothing of a debuginfo block (its keys, its header dump, its queries, the toolbar's output) is left. */
export function expectNoDebuginfo(body: Buffer): void {
  expect(body.toString('utf8')).not.toMatch(/debug[iI]nfo|HTTP HEADERS|SELECT |MWDebug output/);
}

/** An HTML page with the values that differ between any two page views (request id, timing) made equal. */
export function normalisePageView(s: string): string {
  return s
    .replace(/"wgRequestId":"[0-9a-f]+"/g, '"wgRequestId":"X"')
    .replace(/"wgBackendResponseTime":[0-9]+/g, '"wgBackendResponseTime":0')
    .replace(/"time":[0-9]+\}$/, '"time":0}');
}
