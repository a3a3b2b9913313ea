// `$_POST` as PHP builds it, for the parameters that name a request's modules: a urlencoded body
// is a query string; a multipart body's parts without a filename are variables, their values
// as sent; any other type leaves `$_POST` empty. MediaWiki reads `$_POST + $_GET`: the body wins.
import { describe, expect, it } from 'vitest';
import { parsePhpForm, parsePhpQuery, phpStringParam, reachedMaxInputVars } from '../../src/mediawiki/php-input.js';
import { postedForm, requestData } from '../../src/mediawiki/php-post.js';
import { modulesOf } from '../../src/policy/request.js';

const ONLY = new Set(['action', 'generator', 'list', 'prop', 'meta']);
const FORM = 'application/x-www-form-urlencoded';

function multipart(boundary: string, parts: { name: string; value: string; filename?: string }[], eol = '\r\n'): Buffer {
  const body = parts
    .map(
      (p) =>
        `--${boundary}${eol}Content-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}${eol}` +
        `${p.filename ? `Content-Type: application/octet-stream${eol}` : ''}${eol}${p.value}${eol}`,
    )
    .join('');
  return Buffer.from(`${body}--${boundary}--${eol}`, 'latin1');
}

function modules(contentType: string | undefined, body: Buffer | undefined, query = ''): string[] | 'unknown' {
  const form = postedForm(contentType, body, ONLY);
  if (form.kind === 'unreadable') return 'unknown';
  const get = parsePhpQuery(query);
  return modulesOf(form.kind === 'form' ? requestData(get, form.post) : get);
}

describe('the modules a POST runs', () => {
  it('urlencoded: the body as PHP parses a query string', () => {
    expect(modules(FORM, Buffer.from('action=login&lgname=Bob&lgpassword=x&format=json'))).toEqual(['login']);
    expect(modules(`${FORM}; charset=UTF-8`, Buffer.from('action=query&list=allpages%7Crecentchanges&meta=userinfo'))).toEqual([
      'query',
      'allpages',
      'recentchanges',
      'userinfo',
    ]);
    expect(modules(FORM, Buffer.from('format=json&action=edit&action=logout'))).toEqual(['logout']); // the last one wins
  });

  it('the body wins over the query; the query fills in what the body does not say', () => {
    expect(modules(FORM, Buffer.from('action=edit&title=A'), 'action=query&meta=siteinfo')).toEqual(['edit']);
    expect(modules(FORM, Buffer.from('title=A&text=x'), 'action=edit')).toEqual(['edit']);
    expect(modules(FORM, Buffer.from('meta=tokens'), 'action=query')).toEqual(['query', 'tokens']);
  });

  it('multipart: the parts without a filename, values as sent, names as PHP registers them', () => {
    const body = multipart('----b0und', [
      { name: 'action', value: 'upload' },
      { name: 'filename', value: 'A.png' },
      { name: 'file', value: 'action=delete\r\n--not-the-boundary', filename: 'action.png' },
      { name: 'token', value: 'x+\\' },
    ]);
    expect(modules('multipart/form-data; boundary=----b0und', body)).toEqual(['upload']);
    const quoted = multipart('a b;c', [{ name: 'action', value: 'edit' }]);
    expect(modules('multipart/form-data; boundary="a b;c"', quoted)).toEqual(['edit']);
    // LF line ends, as some clients send them; later duplicates win as in a query.
    const lf = multipart(
      'x',
      [
        { name: 'action', value: 'query' },
        { name: 'list', value: 'allpages' },
        { name: 'list', value: 'search' },
      ],
      '\n',
    );
    expect(modules('Multipart/Form-Data; boundary=x', lf)).toEqual(['query', 'search']);
    // `action[]` is an array: not a string action, so MediaWiki's default (help).
    const array = multipart('x', [{ name: 'action[]', value: 'edit' }]);
    expect(modules('multipart/form-data; boundary=x', array)).toEqual(['help']);
    const form = postedForm('multipart/form-data; boundary=x', multipart('x', [{ name: 'action', value: 'a+b%41' }]), ONLY);
    expect(form.kind === 'form' && phpStringParam(form.post, 'action')).toBe('a+b%41'); // nothing decoded
  });

  it('a body PHP does not parse leaves the query to name the modules', () => {
    expect(modules('application/json', Buffer.from('{"action":"edit"}'), 'action=query&meta=siteinfo')).toEqual(['query', 'siteinfo']);
    expect(modules('text/plain', Buffer.from('action=edit'), 'action=parse')).toEqual(['parse']);
    expect(modules(undefined, Buffer.from('action=edit'))).toEqual(['help']);
  });

  it('a form that was not read, or not the multipart form it says, is unknown', () => {
    expect(modules(FORM, undefined, 'action=query')).toBe('unknown');
    expect(modules('multipart/form-data', Buffer.from('--x\r\n\r\n'))).toBe('unknown'); // no boundary
    expect(modules('multipart/form-data; boundary=y', Buffer.from('action=edit'))).toBe('unknown');
    // Past PHP's default post_max_size (8M) PHP fills no $_POST: not read either way.
    expect(modules(FORM, Buffer.from(`action=edit&x=${'a'.repeat(8 * 1024 * 1024)}`), 'action=query')).toBe('unknown');
  });
});

// add_post_vars, recorded from PHP 8.2 under php -S (json_encode($_POST)) for these bodies.
describe('a form body counts towards max_input_vars as PHP counts it (add_post_vars), not as a query', () => {
  it('empty tokens count; the variable past the limit is registered; a raw NUL ends a name, not the body', () => {
    const empties = parsePhpForm(`${'&'.repeat(1500)}action=edit`);
    expect([empties.size, reachedMaxInputVars(empties)]).toEqual([0, true]);
    const passed = parsePhpForm(`${Array.from({ length: 999 }, (_, i) => `v${i}=1&`).join('')}a=1&b=2`);
    expect([passed.size, passed.get('b'), reachedMaxInputVars(passed)]).toEqual([1001, '2', true]);
    expect([...parsePhpForm('a=1%00z&b\x002=3')]).toEqual([
      ['a', '1\x00z'],
      ['b', '3'],
    ]);
  });
});
