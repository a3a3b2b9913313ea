// The README's configuration reference names every key the code accepts, and nothing else.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config.js';

const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('README configuration reference', () => {
  it.each(CONFIG_KEYS)('documents %s', (key) => {
    expect(readme).toContain(`| \`${key}\` |`);
  });

  it('documents no key the code does not know', () => {
    const documented = [...readme.matchAll(/^\| `(WIKIEDGE_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    for (const key of documented) expect(CONFIG_KEYS).toContain(key);
  });
});
