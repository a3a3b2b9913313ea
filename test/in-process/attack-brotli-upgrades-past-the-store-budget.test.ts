// Attack: one anonymous client stores past its budget of bytes stored (limits/client-budget.ts
// StoreBudget) by asking for br. A miss's entry is charged to its client as it is stored (gzip);
// its br form, made once clients preferring br have hit it WIKIEDGE_BROTLI_AFTER_HITS times
// (compression/representations.ts), grew the entry in the tier as a store does, charged to nobody:
// hits are never limited, so the client that stored its entries could hit each itself and
// store ~1.8× its budget, evicting others'. The br form is charged to the client whose hit asked
// for it (steps/store-charge.ts): past its budget it is not made.
import { describe, expect, it } from 'vitest';
import type { Counter } from 'prom-client';
import { until } from '../support/until.js';
import { answerPublic } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** ~236 KB of words: ~42 KB in gzip, ~17 KB in br. */
function body(): string {
  const words =
    'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega wiki page item property label description alias statement'.split(
      ' ',
    );
  const out: string[] = [];
  let x = 7;
  for (let i = 0; i < 30_000; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.push(`${words[x % words.length]}${x % 97}`);
  }
  return JSON.stringify({ batchcomplete: true, words: out.join(' ') });
}

describe('attack: br asked for by the client that stored the entries', () => {
  // A 2 MiB tier: each client's burst is 256 KiB, six gzip entries of ~42 KB; the rate refills nothing.
  const t = gatewayOnFake(answerPublic(body()), {
    WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(2 * 1024 * 1024),
    WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '1',
    WIKIEDGE_BROTLI_AFTER_HITS: '1',
  });

  const upgrades = async () => {
    const metric = t.gw.built.gateway.registry.getSingleMetric('wikiedge_brotli_upgrades_total') as Counter<'outcome'>;
    const values = (await metric.get()).values;
    return (outcome: string) => values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  };

  it('its br forms past its budget are not made; another client`s are', async () => {
    const url = (who: string, i: number) => `${t.gw.apiUrl}?action=query&list=allpages&format=json&who=${who}&n=${i}`;
    const as = (address: string, coding: string) => ({ headers: { 'x-forwarded-for': address, 'accept-encoding': coding } });
    const attacker = '198.51.100.7';
    for (let i = 0; i < 6; i++) expect(header(await http(url('attacker', i), as(attacker, 'gzip')), 'x-cache')).toBe('miss');
    for (let i = 0; i < 6; i++) expect(header(await http(url('attacker', i), as(attacker, 'br')), 'x-cache')).toBe('hit');
    await until(upgrades, (outcome) => outcome('client-budget') + outcome('made') === 6, 20_000);
    expect((await upgrades())('client-budget')).toBeGreaterThanOrEqual(5);

    // Another client, its own budget: its entry's br is made.
    const victim = '192.0.2.1';
    expect(header(await http(url('victim', 0), as(victim, 'gzip')), 'x-cache')).toBe('miss');
    const made = (await upgrades())('made');
    expect(header(await http(url('victim', 0), as(victim, 'br')), 'x-cache')).toBe('hit');
    await until(upgrades, (outcome) => outcome('made') === made + 1, 20_000);
    expect(header(await http(url('victim', 0), as(victim, 'br')), 'content-encoding')).toBe('br');
  }, 60_000);
});
