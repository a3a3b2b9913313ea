// A posted multipart form is searched for WRITE_PARAMETERS alone (src/mediawiki/php-post.ts
// postedForm, src/steps/pass.ts FORM_PARAMETERS), while policy/changes.ts changeFromWrite reads
// the parameters a write names its pages and entities by. A name it reads and the set lacks is
// lost for such a form: `wblmergelexemes` posted as multipart/form-data with `source=L8&target=L9`
// named no lexeme, and its `{"success":1}` answer none either, so the write emptied every list at
// once and left L8's and L9's own answers as they were. Every write module of the table is asked
// here, with every parameter it may read answered, and each name it asked for must be in the set.
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';
import { ACTIONS, WRITE_PARAMETERS } from '../../src/mediawiki/modules.js';
import { MODULE_PARAMETERS } from '../../src/steps/request-record.js';
import { postedForm } from '../../src/mediawiki/php-post.js';

const writes = Object.entries(ACTIONS)
  .filter(([, facts]) => facts.write)
  .map(([action]) => action);

/** A successful answer of `action`, in both of the shapes changes.ts confirms (Wikibase's and core's). */
const success = (action: string) => ({ success: 1, [action]: { result: 'Success', title: 'Sandbox' }, entity: { id: 'Q1' } });

describe('the parameters a write is read by are searched for in a posted form', () => {
  it.each(writes)('%s', (action) => {
    const asked = new Set<string>();
    // Every parameter given, then each one absent in turn: a parameter read only when another is
    // missing (`fromid` when there is no `pageid`) is asked for too.
    const read = (absent?: string) =>
      changeFromWrite(
        action,
        (name) => {
          asked.add(name);
          return name === absent ? undefined : 'Q1';
        },
        undefined,
        success(action),
      );
    read();
    for (const name of [...asked]) read(name);
    const missing = [...asked].filter((name) => !WRITE_PARAMETERS.has(name));
    expect(missing).toEqual([]);
  });

  it('wblmergelexemes posted as multipart names both lexemes at once', () => {
    const boundary = 'b0undary';
    const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body = Buffer.from(
      `${field('action', 'wblmergelexemes')}${field('source', 'L8')}${field('target', 'L9')}${field('token', '+\\')}--${boundary}--\r\n`,
    );
    const form = postedForm(`multipart/form-data; boundary=${boundary}`, body, new Set([...MODULE_PARAMETERS, ...WRITE_PARAMETERS]));
    expect(form.kind).toBe('form');
    const post = form.kind === 'form' ? form.post : new Map();
    const param = (name: string) => {
      const v = post.get(name);
      return typeof v === 'string' ? v : undefined;
    };
    const change = changeFromWrite('wblmergelexemes', param, undefined, { success: 1 })!;
    expect(change.tags).toContain('p:Lexeme:L8');
    expect(change.tags).toContain('p:Lexeme:L9');
    // Unproven (its answer never says whether it saved anything): no list at once.
    expect(change.tags).not.toContain('*');
  });
});
