// A Redis Cluster master that restarted at the same address answers INFO with another run_id
// (Redis draws one at every start: src/server.c initServerConfig); without persistence it came
// back empty, and src/cache/redis/cluster-watch.ts takes that as a gap. Only a change of a run_id
// already seen counts: the first answer, or no answer, is no restart.
import { describe, expect, it } from 'vitest';
import { restarted, runIdOf } from '../../src/cache/redis/cluster-watch.js';

const info = (runId: string) => `# Server\r\nredis_version:7.0.15\r\nredis_mode:cluster\r\nprocess_id:41\r\nrun_id:${runId}\r\ntcp_port:7000\r\n`;

describe('a master restart, by its run_id', () => {
  it('reads the run_id of an INFO server answer', () => {
    expect(runIdOf(info('3f1c0d9a6b2e4c8d7a1b0e9f8c7d6a5b4c3d2e1f'))).toBe('3f1c0d9a6b2e4c8d7a1b0e9f8c7d6a5b4c3d2e1f');
    expect(runIdOf('# Server\r\nredis_version:7.0.15\r\n')).toBeUndefined();
  });

  it('another run_id at the same address is a restart; the first one seen, or none, is not', () => {
    expect(restarted('aaaa', 'bbbb')).toBe(true);
    expect(restarted('aaaa', 'aaaa')).toBe(false);
    expect(restarted(undefined, 'aaaa')).toBe(false);
    expect(restarted('aaaa', undefined)).toBe(false);
  });
});
