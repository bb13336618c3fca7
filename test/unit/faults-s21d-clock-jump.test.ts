/**
 * The system clock jumps (set by hand, corrected by NTP after a sleep): timeouts and rates must
 * not move with it. A call's total cap in the RPC peer is measured on the monotonic clock, so a
 * clock set forward does not time out every call that reports progress; a rate bucket given a
 * clock set back refills nothing instead of draining for as long as the clock went back.
 */
import { afterEach, describe, expect, test, setSystemTime } from 'bun:test';
import * as v from 'valibot';
import { RpcPeer, type RpcTransport } from '../../server/protocol/rpc-peer.ts';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';

const AtoB = {
  work: { kind: 'request', params: v.object({ token: v.string() }), result: v.object({ done: v.boolean() }) },
} as const;
const BtoA = {
  progress: { kind: 'notification', params: v.object({ token: v.string() }) },
} as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pair(): [RpcTransport, RpcTransport] {
  const listeners: [((t: string) => void) | null, ((t: string) => void) | null] = [null, null];
  const end = (i: 0 | 1): RpcTransport => ({
    send(text) {
      const to = listeners[1 - i];
      queueMicrotask(() => to?.(text));
    },
    onMessage(cb) {
      listeners[i] = cb;
    },
    close() {},
  });
  return [end(0), end(1)];
}

afterEach(() => setSystemTime());

describe('a clock that jumps', () => {
  test('a call reporting progress is not timed out by the clock set an hour forward', async () => {
    const [a, b] = pair();
    const caller = new RpcPeer({ transport: a, outgoing: AtoB, incoming: BtoA, defaultTimeoutMs: 5_000, progress: { method: 'progress', token: (p) => p.token }, handlers: { progress: () => {} } });
    const callee: RpcPeer<typeof BtoA, typeof AtoB> = new RpcPeer({
      transport: b,
      outgoing: BtoA,
      incoming: AtoB,
      defaultTimeoutMs: 5_000,
      handlers: {
        work: async ({ token }) => {
          setSystemTime(new Date(Date.now() + 3_600_000));
          // Progress restarts the call's timeout, capped by its total: the cap must still be 60 s away.
          callee.notify('progress', { token });
          await sleep(30);
          return { done: true };
        },
      },
    });
    const r = await caller.request('work', { token: 't1' }, { timeoutMs: 5_000, maxTotalMs: 60_000, progressToken: 't1' }).catch((e: Error) => e);
    expect(r).toEqual({ done: true });
  });

  test('a rate bucket given a clock set back an hour refills nothing, and then refills at its rate', () => {
    const t0 = 1_800_000_000_000;
    const bucket = new TokenBucket(5, 1, t0);
    bucket.take(5);
    const back = t0 - 3_600_000;
    expect(bucket.level(back)).toBe(0);
    expect(bucket.waitMs(1, back)).toBe(1000);
    expect(bucket.level(back + 1000)).toBe(1);
    // Set forward: at most a full bucket, never more.
    expect(bucket.level(back + 7_200_000)).toBe(5);
  });
});
