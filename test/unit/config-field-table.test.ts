// The table of keys (src/config/fields.ts) is the single source: its names, defaults, secrets and
// documentation agree with what loading does, for every key, including the ones added later.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, ConfigError, describeConfig, loadConfig, renderConfigReference } from '../../src/config/config.js';
import { FIELD_LIST } from '../../src/config/fields.js';
import { scratchDir } from '../support/scratch.js';

const base = { WIKIEDGE_UPSTREAM: 'http://127.0.0.1:8080' };
const defaults = loadConfig(base);

/** The reference's rows: environment name → default column. */
const documentedDefault = new Map([...renderConfigReference().matchAll(/^\| `(WIKIEDGE_[A-Z_]+)` \| (.+?) \| /gm)].map((m) => [m[1]!, m[2]!]));

describe('the table of configuration keys', () => {
  it.each(FIELD_LIST.map(([key, field]) => [field.env, key]))('%s is WIKIEDGE_ + the file key %s in SNAKE_CASE', (env, key) => {
    expect(env).toBe(`WIKIEDGE_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`);
  });

  it('CONFIG_KEYS are its environment names in its order, and Config has its keys', () => {
    expect(CONFIG_KEYS).toEqual(FIELD_LIST.map(([, f]) => f.env));
    expect(Object.keys(defaults)).toEqual(FIELD_LIST.map(([key]) => key));
    expect(new Set(CONFIG_KEYS).size).toBe(CONFIG_KEYS.length);
  });

  it.each(FIELD_LIST.map(([key, field]) => [field.env, key, field.doc]))('%s has one line of documentation', (_env, _key, doc) => {
    expect(doc.trim()).not.toBe('');
    expect(doc).not.toMatch(/[\n|]/);
    expect(doc).not.toMatch(/Also from a file/);
  });

  it.each(FIELD_LIST.map(([key, field]) => [field.env, key]))('%s: the documented default is what an unset key gets', (env, key) => {
    const shown = documentedDefault.get(env);
    const literal = shown?.match(/^`([^`]*)`/)?.[1];
    if (shown === '(required)') return expect(() => loadConfig({ ...base, [env]: '' })).toThrow(new ConfigError(env, 'is required'));
    if (shown === '(empty)') return expect(defaults[key]).toHaveLength(0);
    if (shown === '(random at start)') return expect(loadConfig(base)[key]).not.toEqual(defaults[key]);
    expect(literal, `${env}: the default column ${shown}`).toBeDefined();
    // Writing the documented default explicitly changes nothing.
    expect(loadConfig({ ...base, [env]: literal })[key]).toEqual(defaults[key]);
  });

  it.each(FIELD_LIST.filter(([, f]) => f.secret).map(([key, field]) => [field.env, key]))(
    '%s is a secret: from <ENV>_FILE too, never described',
    (env, key) => {
      const value = 'a-secret-value-0123456789';
      const file = path.join(scratchDir('wikiedge-secret-'), 'secret');
      writeFileSync(file, `${value}\n`);
      const fromFile = loadConfig({ ...base, [`${env}_FILE`]: file });
      expect(fromFile[key]).toEqual(loadConfig({ ...base, [env]: value })[key]);
      expect(JSON.stringify(describeConfig(fromFile))).not.toContain(value);
    },
  );

  it('only secrets may come from <ENV>_FILE', () => {
    for (const [, field] of FIELD_LIST.filter(([, f]) => !f.secret)) {
      expect(() => loadConfig({ ...base, [`${field.env}_FILE`]: '/dev/null' })).toThrow(`${field.env}_FILE: is not a known configuration key`);
    }
  });
});
