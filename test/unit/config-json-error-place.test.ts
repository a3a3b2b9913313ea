// A JSON value that does not parse is named with where it breaks: line, column and what was
// found there, whatever V8's own message says (it names a position for some mistakes only).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { describeJsonError, jsonErrorPlace } from '../../src/config/json-error.js';

describe('where a JSON text breaks', () => {
  it.each([
    ['{"a":1,}', 1, 8, 'unexpected "}"'],
    ['{"a":{"ttlSeconds":}}', 1, 20, 'unexpected "}"'],
    ['{"a"', 1, 5, 'unexpected end of text'],
    ['', 1, 1, 'unexpected end of text'],
    ['{\n  "x": tru\n}', 2, 8, 'unexpected "t"'],
    ['{"a": 01}', 1, 8, 'unexpected "1"'],
    ['{"a": "\\x"}', 1, 9, 'unexpected "x"'],
    ['{"a": 1} x', 1, 10, 'unexpected "x"'],
    ["{'a': 1}", 1, 2, `unexpected "'"`],
  ])('%j: line %i, column %i', (text, line, column, problem) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonErrorPlace(text)).toMatchObject({ line, column, problem });
  });

  it.each(['{}', '[1, 2.5e3, -0, true, false, null]', '{"a": {"b": ["\\u00e9", "\\n"]}}', ' "x" '])('%j is valid JSON: no place', (text) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(jsonErrorPlace(text)).toBeUndefined();
  });

  it('is said in words', () => {
    expect(describeJsonError('{"a":1,}')).toBe('at line 1, column 8 (unexpected "}")');
  });
});

describe('WIKIEDGE_MODULES that is not JSON', () => {
  it('names the key and where the JSON breaks', () => {
    const load = () => loadConfig({ WIKIEDGE_UPSTREAM: 'http://wiki:80', WIKIEDGE_MODULES: '{"parse":{"pass":true},}' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('WIKIEDGE_MODULES: must be a JSON object of module name to rule: not valid JSON at line 1, column 24 (unexpected "}")');
  });
});
