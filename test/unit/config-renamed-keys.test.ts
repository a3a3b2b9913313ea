// A renamed key is still taken under its former name, with a warning that says the new one,
// from the environment and from the WIKIEDGE_CONFIG file; both names at once is an error.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigWithOrigins } from '../../src/config/config.js';
import { scratchDir } from '../support/scratch.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:80' };

describe('WIKIEDGE_READY_TIMEOUT_MS, now WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS', () => {
  it('is taken from the environment under its former name, with a warning', () => {
    const loaded = loadConfigWithOrigins({ ...base, WIKIEDGE_READY_TIMEOUT_MS: '750' });
    expect(loaded.config.upstreamProbeTimeoutMs).toBe(750);
    expect(loaded.origins.upstreamProbeTimeoutMs).toBe('environment');
    expect(loaded.warnings).toEqual(['WIKIEDGE_READY_TIMEOUT_MS is now called WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS: rename it']);
  });

  it('is validated under its former name', () => {
    expect(() => loadConfigWithOrigins({ ...base, WIKIEDGE_READY_TIMEOUT_MS: '0' })).toThrow('WIKIEDGE_READY_TIMEOUT_MS: must be an integer from 1 to 60000');
  });

  it('is an error under both names', () => {
    expect(() => loadConfigWithOrigins({ ...base, WIKIEDGE_READY_TIMEOUT_MS: '750', WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS: '500' })).toThrow(
      'WIKIEDGE_READY_TIMEOUT_MS: must not be set together with WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS, its new name',
    );
  });

  it('is taken from the file under its former key, with a warning', () => {
    const file = path.join(scratchDir('wikiedge-renamed-'), 'wikiedge.yaml');
    writeFileSync(file, 'readyTimeoutMs: 900\n');
    const loaded = loadConfigWithOrigins({ ...base, WIKIEDGE_CONFIG: file });
    expect(loaded.config.upstreamProbeTimeoutMs).toBe(900);
    expect(loaded.origins.upstreamProbeTimeoutMs).toBe('config-file');
    expect(loaded.warnings).toEqual(['readyTimeoutMs (in the WIKIEDGE_CONFIG file) is now called upstreamProbeTimeoutMs: rename it']);
  });

  it('the new name gives no warning', () => {
    expect(loadConfigWithOrigins({ ...base, WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS: '750' }).warnings).toEqual([]);
  });
});
