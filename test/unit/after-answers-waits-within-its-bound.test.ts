// Closing a gateway waits for the stores its misses left running after their answers
// (gateway/gateway.ts AfterAnswers, apps/app.ts closeGateway), but never longer than its bound.
import { describe, expect, it } from 'vitest';
import { AfterAnswers } from '../../src/gateway/gateway.js';

describe('AfterAnswers', () => {
  it('settled() resolves once every tracked work has settled, rejected ones included', async () => {
    const after = new AfterAnswers();
    let finish!: () => void;
    let fail!: (err: Error) => void;
    const one = new Promise<void>((resolve) => (finish = resolve));
    const two = new Promise<void>((_resolve, reject) => (fail = reject));
    two.catch(() => undefined);
    after.track(one);
    after.track(two);
    expect(after.size).toBe(2);
    let done = false;
    const settled = after.settled(60_000).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    finish();
    fail(new Error('the store failed'));
    await settled;
    expect(done).toBe(true);
    expect(after.size).toBe(0);
  });

  it('settled() gives up after its bound when work never ends', async () => {
    const after = new AfterAnswers();
    after.track(new Promise<void>(() => undefined));
    await after.settled(20);
    expect(after.size).toBe(1);
  });

  it('settled() with nothing tracked resolves at once', async () => {
    await new AfterAnswers().settled(60_000);
  });
});

describe('AfterAnswers.begin', () => {
  it('counts work until its done(), and settled() waits for it', async () => {
    const after = new AfterAnswers();
    const running = after.begin();
    expect(after.size).toBe(1);
    let done = false;
    const settled = after.settled(60_000).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    running.done();
    running.done();
    await settled;
    expect(done).toBe(true);
    expect(after.size).toBe(0);
  });
});
