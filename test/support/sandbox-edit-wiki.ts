// A stand-in wiki for the write-attack tests: every POST is an edit the wiki saved, of the page
// `edited` names (the sandbox unless a test says otherwise), whatever the request says; every GET
// answers a public list of the Template: namespace. Beside a gateway (gateway-on-fake.ts), the
// list tells whether a write emptied the lists of a namespace the wiki did not touch.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'vitest';
import type { GatewayOnFake } from './gateway-on-fake.js';
import { header, http } from './http.js';

export interface SandboxEditWiki {
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The page the wiki's next edits save (its answer names it). */
  edited: string;
}

export function sandboxEditWiki(): SandboxEditWiki {
  let rev = 100;
  const wiki: SandboxEditWiki = {
    edited: 'Sandbox',
    handler: (req, res) => {
      if (req.method === 'POST') {
        req.resume();
        req.on('end', () => {
          rev++;
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, must-revalidate, max-age=0' });
          res.end(JSON.stringify({ edit: { result: 'Success', pageid: 1, title: wiki.edited, contentmodel: 'wikitext', oldrevid: rev - 1, newrevid: rev } }));
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=300, max-age=300, public' });
      res.end(JSON.stringify({ batchcomplete: '', query: { allpages: [{ pageid: 9, ns: 10, title: 'Template:Infobox' }] } }));
    },
  };
  return wiki;
}

export const TEMPLATES = '?action=query&list=allpages&apnamespace=10&format=json';

/** The Template: list, fetched and found a hit: its URL. */
export async function templatesCached(pair: GatewayOnFake): Promise<string> {
  await http(`${pair.gw.apiUrl}${TEMPLATES}`);
  await pair.gw.built.gateway.afterAnswers.settled(5_000);
  expect(header(await http(`${pair.gw.apiUrl}${TEMPLATES}`), 'x-cache')).toContain('hit');
  return `${pair.gw.apiUrl}${TEMPLATES}`;
}
