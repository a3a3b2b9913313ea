// The primary's questions to its workers over IPC (src/cluster/messages.ts, src/cluster/ipc-asks.ts):
// which messages are ours, and that every ask settles: with the answer, the worker's error, a
// timeout, a failed send or the worker's exit. Workers are plain objects recording what they get.
import { describe, expect, it } from 'vitest';
import { IpcAsks } from '../../src/cluster/ipc-asks.js';
import { type AskMessage, isAnswer, isAsk, isSiblingsPurge } from '../../src/cluster/messages.js';

describe('message guards', () => {
  const ask = { wikiedge: 'ask', id: 1, ask: { op: 'metrics' } };
  const answer = { wikiedge: 'answer', id: 1, value: [] };
  const siblings = { wikiedge: 'siblings-purge', message: { kind: 'all' } };
  // What else reaches a worker's 'message' listeners: node:cluster's own messages, anything.
  const others = [null, undefined, 'ask', 42, { cmd: 'NODE_CLUSTER', act: 'listening' }, { wikiedge: 'other' }];

  it('each recognises its own message and nothing else', () => {
    expect([ask, answer, siblings, ...others].map(isAsk)).toEqual([true, false, false, ...others.map(() => false)]);
    expect([ask, answer, siblings, ...others].map(isAnswer)).toEqual([false, true, false, ...others.map(() => false)]);
    expect([ask, answer, siblings, ...others].map(isSiblingsPurge)).toEqual([false, false, true, ...others.map(() => false)]);
  });
});

interface FakeWorker {
  readonly id: number;
  readonly sent: AskMessage[];
  send(message: AskMessage, callback: (error: Error | null) => void): boolean;
}
function worker(id: number, sendError?: Error): FakeWorker {
  const sent: AskMessage[] = [];
  return {
    id,
    sent,
    send(message, callback) {
      sent.push(message);
      queueMicrotask(() => callback(sendError ?? null));
      return true;
    },
  };
}

describe('IpcAsks', () => {
  it('sends the ask with a fresh id and resolves with the answer of that id', async () => {
    const asks = new IpcAsks<FakeWorker>();
    const w = worker(7);
    const first = asks.ask(w, { op: 'purge', message: { kind: 'all' }, everywhere: false }, 1_000);
    const second = asks.ask(w, { op: 'metrics' }, 1_000);
    expect(w.sent.map((m) => m.ask.op)).toEqual(['purge', 'metrics']);
    const [a, b] = w.sent;
    expect(a!.wikiedge).toBe('ask');
    expect(a!.id).not.toBe(b!.id);
    asks.answered({ wikiedge: 'answer', id: b!.id, value: [] });
    asks.answered({ wikiedge: 'answer', id: a!.id, value: { purged: 3 } });
    expect(await first).toEqual({ purged: 3 });
    expect(await second).toEqual([]);
    expect(asks.waiting).toBe(0);
  });

  it('rejects with the worker’s error, naming the worker', async () => {
    const asks = new IpcAsks<FakeWorker>();
    const w = worker(7);
    const p = asks.ask(w, { op: 'metrics' }, 1_000);
    asks.answered({ wikiedge: 'answer', id: w.sent[0]!.id, error: 'Error: boom' });
    await expect(p).rejects.toThrow('worker 7: Error: boom');
  });

  it('gives up after timeoutMs; an answer after that is dropped', async () => {
    const asks = new IpcAsks<FakeWorker>();
    const w = worker(7);
    await expect(asks.ask(w, { op: 'metrics' }, 20)).rejects.toThrow('worker 7: no answer within 20 ms');
    expect(asks.waiting).toBe(0);
    asks.answered({ wikiedge: 'answer', id: w.sent[0]!.id, value: [] });
  });

  it('rejects when the ask cannot be sent', async () => {
    const asks = new IpcAsks<FakeWorker>();
    await expect(asks.ask(worker(7, new Error('channel closed')), { op: 'metrics' }, 1_000)).rejects.toThrow('worker 7: channel closed');
    expect(asks.waiting).toBe(0);
  });

  it('a worker that exits fails its own asks at once, not another worker’s', async () => {
    const asks = new IpcAsks<FakeWorker>();
    const [dead, alive] = [worker(1), worker(2)];
    const lost = asks.ask(dead, { op: 'metrics' }, 60_000);
    const kept = asks.ask(alive, { op: 'metrics' }, 60_000);
    asks.abandon(dead);
    await expect(lost).rejects.toThrow('worker 1: worker exited');
    expect(asks.waiting).toBe(1);
    asks.answered({ wikiedge: 'answer', id: alive.sent[0]!.id, value: [] });
    expect(await kept).toEqual([]);
  });
});
