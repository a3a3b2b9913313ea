// A stashed upload (`action=upload&stash=1`, or a chunk of one) answers `"result":"Success"` with
// its `filekey` (ApiUpload::getStashResult, getChunkResult) and publishes nothing: no File: page,
// no log row, no recentchanges row. Any user allowed to upload could empty every list, and the
// File: namespace's, on every replica, as often as they liked: the gateway took the answer for a
// published upload. Only a published upload names its file (`filename`, ApiUpload::performUpload).
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const imageinfo = { width: 1, height: 1, size: 68, mime: 'image/png' };

describe('an upload', () => {
  it('stashed (or a chunk of one): only the page it names, no list', () => {
    for (const answer of [
      { upload: { result: 'Success', filekey: '1ab2c3.png', sessionkey: '1ab2c3.png', imageinfo } },
      { upload: { result: 'Success', filekey: '1ab2c3.png', offset: 68, imageinfo } },
    ]) {
      const c = changeFromWrite('upload', params({ action: 'upload', stash: '1', filename: 'Stashed.png', token: 't' }), undefined, answer)!;
      expect(c.tags).not.toContain('*');
      expect(c.tags).not.toContain('n:6');
    }
  });

  it('the status of a published one, asked again (checkstatus=1, $wgEnableAsyncUploads): only the page it names, no list', () => {
    const c = changeFromWrite('upload', params({ action: 'upload', filekey: '1ab2c3.png', checkstatus: '1', token: 't' }), undefined, {
      upload: { result: 'Success', stage: 'publish', filename: 'Published.png', imageinfo },
    })!;
    expect(c.tags).not.toContain('*');
    expect(c.tags).not.toContain('n:6');
    expect(c.tags).toContain('p:File:Published.png');
  });

  it('published: its file page, its namespace and every list', () => {
    const c = changeFromWrite('upload', params({ action: 'upload', filename: 'Published.png', token: 't' }), undefined, {
      upload: { result: 'Success', filename: 'Published.png', imageinfo },
    })!;
    expect(c.tags).toEqual(expect.arrayContaining(['*', 'n:6', 'p:File:Published.png']));
  });
});
