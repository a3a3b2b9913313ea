// The configuration reference (docs/CONFIGURATION.md) names every key the code accepts, and nothing else; it is
// generated from the table of keys (src/config/fields.ts) and must be exactly what the table gives.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, renderConfigReference } from '../../src/config/config.js';

const readme = readFileSync(path.resolve(import.meta.dirname, '../../docs/CONFIGURATION.md'), 'utf8');

/** The table: from its header row to the first line that is not a row. */
function readmeTable(): string {
  const lines = readme.split('\n');
  const start = lines.indexOf('| key | default | meaning |');
  if (start < 0) return '';
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return lines
    .slice(start, end)
    .map((l) => `${l}\n`)
    .join('');
}

describe('the configuration reference (docs/CONFIGURATION.md)', () => {
  it.each(CONFIG_KEYS)('documents %s', (key) => {
    expect(readme).toContain(`| \`${key}\` |`);
  });

  it('documents no key the code does not know', () => {
    const documented = [...readme.matchAll(/^\| `(WIKIEDGE_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    for (const key of documented) expect(CONFIG_KEYS).toContain(key);
  });

  it('is the table generated from src/config/fields.ts, row for row', () => {
    expect(
      readmeTable(),
      "docs/CONFIGURATION.md's configuration table differs from src/config/fields.ts; regenerate it with " +
        '`npm run build && node scripts/config-reference.mjs --write`',
    ).toBe(renderConfigReference());
  });
});
