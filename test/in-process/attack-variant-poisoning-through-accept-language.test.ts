// Attack: one reader's Accept-Language chooses the language variant every reader gets. On a wiki
// whose language has variants (Chinese, Serbian, Kazakh…), MediaWiki converts what it renders to
// the variant an anonymous reader's Accept-Language asks for (LanguageConverter::
// getHeaderVariant) and its API says nothing of it in Vary (ApiMain::sendCacheHeaders): an
// `action=parse` answer in Traditional characters, stored, became every reader's. The key now
// holds the header's codes of languages with variants (mediawiki/accept-language.ts); every
// other Accept-Language shares the entry of a reader that sends none. The stand-in wiki answers
// with the header it was sent, as a converted page would differ.
import { describe, expect, it } from 'vitest';
import { answerPublicEchoingHeaders, echoedHeaders } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http, rawTarget } from '../support/http.js';

describe('attack: a variant chosen by Accept-Language, stored for every reader', () => {
  const t = gatewayOnFake(answerPublicEchoingHeaders);
  const get = async (url: string, acceptLanguage?: string) => {
    const res = await http(url, { headers: acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage } });
    return { xCache: header(res, 'x-cache'), sent: echoedHeaders(res)['accept-language'] };
  };

  it('readers asking for other variants each get the answer made for their own, on the full and the short hit path', async () => {
    const url = `${t.gw.apiUrl}?action=parse&page=Main_Page&format=json`;
    expect(await get(url, 'zh-TW,zh;q=0.9')).toEqual({ xCache: 'miss', sent: 'zh-TW,zh;q=0.9' });
    expect(await get(url, 'zh-CN,zh;q=0.9')).toEqual({ xCache: 'miss', sent: 'zh-CN,zh;q=0.9' });
    expect(await get(url)).toEqual({ xCache: 'miss', sent: undefined });
    // Again: hits, each its own (the second and third on the fresh-hit path).
    for (let i = 0; i < 2; i++) {
      expect(await get(url, 'zh-TW,zh;q=0.9')).toEqual({ xCache: 'hit', sent: 'zh-TW,zh;q=0.9' });
      expect(await get(url, 'zh-CN,zh;q=0.9')).toEqual({ xCache: 'hit', sent: 'zh-CN,zh;q=0.9' });
      expect(await get(url)).toEqual({ xCache: 'hit', sent: undefined });
    }
  });

  it('a header naming no language with variants shares the entry of a reader that sends none', async () => {
    const url = `${t.gw.apiUrl}?action=parse&page=Other&format=json`;
    expect((await get(url)).xCache).toBe('miss');
    expect((await get(url, 'en-US,en;q=0.9,de;q=0.8')).xCache).toBe('hit');
    // The same variants written otherwise (case, spaces) share too.
    expect((await get(url, 'zh-tw')).xCache).toBe('miss');
    expect((await get(url, 'en, ZH-TW')).xCache).toBe('hit');
  });

  it('an Accept-Language listed in Connection is not the wiki`s to read, nor the key`s', async () => {
    const path = `${new URL(t.gw.apiUrl).pathname}?action=parse&page=Listed&format=json`;
    const listed = () => rawTarget(t.gw.url, path, { headers: { connection: 'accept-language', 'accept-language': 'zh-tw' } });
    const first = await listed();
    expect([header(first, 'x-cache'), echoedHeaders(first)['accept-language']]).toEqual(['miss', undefined]);
    expect((await get(`${t.gw.apiUrl}?action=parse&page=Listed&format=json`)).xCache).toBe('hit');
    expect(header(await listed(), 'x-cache')).toBe('hit');
  });
});
