/**
 * server/protocol/rpc-peer.ts: two peers over an in-memory transport (correlation, timeout,
 * progress extending the timeout, cancellation, close rejecting pending, params refused on receipt).
 */
import { describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { RpcPeer, RpcPeerError, type HandlerTable, type RpcTransport } from '../../server/protocol/rpc-peer.ts';

const AtoB = {
  add: { kind: 'request', params: v.object({ a: v.number(), b: v.number() }), result: v.object({ sum: v.number() }) },
  slow: { kind: 'request', params: v.object({ token: v.string(), ms: v.number(), steps: v.optional(v.number()) }), result: v.object({ done: v.boolean() }) },
  stop: { kind: 'notification', params: v.object({ token: v.string(), why: v.string() }) },
  hello: { kind: 'notification', params: v.object({ name: v.string() }) },
} as const;
const BtoA = {
  progress: { kind: 'notification', params: v.object({ token: v.string() }) },
  who: { kind: 'request', params: v.optional(v.object({})), result: v.object({ name: v.string() }) },
} as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pair of connected in-memory transports; frames can be observed and injected. */
function pair() {
  const listeners: [((t: string) => void) | null, ((t: string) => void) | null] = [null, null];
  const frames: [string[], string[]] = [[], []];
  let closed = false;
  const end = (i: 0 | 1): RpcTransport => ({
    send(text) {
      if (closed) throw new Error('closed');
      frames[i].push(text);
      const to = listeners[1 - i];
      queueMicrotask(() => to?.(text));
    },
    onMessage(cb) {
      listeners[i] = cb;
    },
    close() {
      closed = true;
    },
  });
  return { a: end(0), b: end(1), sentByA: frames[0], sentByB: frames[1], inject: (i: 0 | 1, text: string) => listeners[i]?.(text) };
}

function setup(opts: { bHandlers?: Partial<HandlerTable<typeof AtoB>>; timeoutMs?: number } = {}) {
  const t = pair();
  const seen: { stop: unknown[]; hello: unknown[]; progress: unknown[]; refused: unknown[] } = { stop: [], hello: [], progress: [], refused: [] };
  const running = new Map<string, () => void>();
  const bHandlers: HandlerTable<typeof AtoB> = {
    add: ({ a, b }) => ({ sum: a + b }),
    slow: async ({ token, ms, steps }) => {
      for (let i = 0; i < (steps ?? 1); i++) {
        await sleep(ms);
        if (steps) bPeer.notify('progress', { token });
      }
      return { done: true };
    },
    stop: (p) => void seen.stop.push(p),
    hello: (p) => void seen.hello.push(p),
    ...opts.bHandlers,
  };
  const aPeer = new RpcPeer({
    transport: t.a,
    outgoing: AtoB,
    incoming: BtoA,
    defaultTimeoutMs: opts.timeoutMs ?? 1000,
    progress: { method: 'progress', token: (p) => p.token },
    handlers: { progress: (p) => void seen.progress.push(p), who: () => ({ name: 'a' }) },
    onRefused: (r) => void seen.refused.push(r),
  });
  const bPeer: RpcPeer<typeof BtoA, typeof AtoB> = new RpcPeer({
    transport: t.b,
    outgoing: BtoA,
    incoming: AtoB,
    idPrefix: 'x',
    defaultTimeoutMs: 1000,
    handlers: bHandlers,
    onRefused: (r) => void seen.refused.push(r),
  });
  return { t, aPeer, bPeer, seen, running };
}

describe('RpcPeer', () => {
  test('correlates answers with requests, whatever their order', async () => {
    const { aPeer, bPeer } = setup({
      bHandlers: { add: async ({ a, b }) => (await sleep(a), { sum: a + b }) },
    });
    const [slow, fast] = await Promise.all([aPeer.request('add', { a: 30, b: 1 }), aPeer.request('add', { a: 1, b: 1 })]);
    expect(slow).toEqual({ sum: 31 });
    expect(fast).toEqual({ sum: 2 });
    expect(await bPeer.request('who', {})).toEqual({ name: 'a' });
    expect(aPeer.pendingCount).toBe(0);
  });

  test('a request without an answer times out, the pending entry is gone and the other side is told', async () => {
    const { aPeer, seen } = setup();
    const started = Date.now();
    const err = await aPeer
      .request('slow', { token: 't1', ms: 500 }, { timeoutMs: 60, cancel: { method: 'stop', params: (why) => ({ token: 't1', why }) } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(RpcPeerError);
    expect((err as RpcPeerError).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(400);
    expect(aPeer.pendingCount).toBe(0);
    await sleep(10);
    expect(seen.stop).toEqual([{ token: 't1', why: 'timeout' }]);
  });

  test('progress restarts the timeout, but never beyond maxTotalMs', async () => {
    const { aPeer, seen } = setup();
    // 6 steps of 40 ms = 240 ms in all, each well inside the 100 ms inactivity timeout.
    const r = await aPeer.request('slow', { token: 'p1', ms: 40, steps: 6 }, { timeoutMs: 100, progressToken: 'p1' });
    expect(r).toEqual({ done: true });
    expect(seen.progress.length).toBe(6); // the handler still runs
    const capped = await aPeer.request('slow', { token: 'p2', ms: 40, steps: 10 }, { timeoutMs: 100, maxTotalMs: 150, progressToken: 'p2' }).catch((e) => e);
    expect((capped as RpcPeerError).kind).toBe('timeout');
    expect((capped as RpcPeerError).info.elapsedMs).toBeLessThan(300);
  });

  test('an AbortSignal cancels: the request fails at once and a cancel notification goes out', async () => {
    const { aPeer, seen } = setup();
    const ac = new AbortController();
    const p = aPeer.request('slow', { token: 'c1', ms: 300 }, { signal: ac.signal, cancel: { method: 'stop', params: (why) => ({ token: 'c1', why }) } });
    setTimeout(() => ac.abort(), 20);
    const err = (await p.catch((e) => e)) as RpcPeerError;
    expect(err.kind).toBe('cancelled');
    await sleep(10);
    expect(seen.stop).toEqual([{ token: 'c1', why: 'aborted' }]);
    // Already aborted: refused without sending anything.
    const before = aPeer.pendingCount;
    expect(((await aPeer.request('add', { a: 1, b: 2 }, { signal: ac.signal }).catch((e) => e)) as RpcPeerError).kind).toBe('cancelled');
    expect(aPeer.pendingCount).toBe(before);
  });

  test('close rejects every pending request with its cause; later requests fail at once', async () => {
    const { aPeer } = setup();
    const calls = [aPeer.request('slow', { token: 'z1', ms: 1000 }), aPeer.request('slow', { token: 'z2', ms: 1000 }, { label: 'my_tool' })];
    expect(aPeer.pendingCount).toBe(2);
    aPeer.close('replaced');
    const errs = (await Promise.all(calls.map((c) => c.catch((e) => e)))) as RpcPeerError[];
    expect(errs.map((e) => e.kind)).toEqual(['closed', 'closed']);
    expect(errs.map((e) => e.info.cause)).toEqual(['replaced', 'replaced']);
    expect(errs[1].info.label).toBe('my_tool');
    expect(aPeer.pendingCount).toBe(0);
    expect(((await aPeer.request('add', { a: 1, b: 1 }).catch((e) => e)) as RpcPeerError).kind).toBe('not_open');
  });

  test('mapError turns failures into the application error', async () => {
    const t = pair();
    const peer = new RpcPeer({
      transport: t.a,
      outgoing: AtoB,
      incoming: BtoA,
      defaultTimeoutMs: 30,
      handlers: { progress: () => {}, who: () => ({ name: 'a' }) },
      mapError: (e) => new Error(`mapped ${e.kind} ${e.info.method}`),
    });
    expect(((await peer.request('add', { a: 1, b: 1 }).catch((e) => e)) as Error).message).toBe('mapped timeout add');
  });

  test('params are checked on receipt: a malformed request gets -32602, an unknown one -32601, nothing runs', async () => {
    const { t, seen } = setup({ bHandlers: { add: () => { throw new Error('must not run'); } } });
    t.inject(1, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'add', params: { a: 'one', b: 2 } }));
    t.inject(1, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'nope', params: {} }));
    t.inject(1, JSON.stringify({ jsonrpc: '2.0', method: 'hello', params: { name: 42 } }));
    t.inject(1, '{not json');
    await sleep(10);
    const answers = t.sentByB.map((f) => JSON.parse(f));
    const five = answers.find((m) => m.id === 5);
    expect(five.error.code).toBe(-32602);
    expect(five.error.message).toContain('a');
    expect(answers.find((m) => m.id === 6).error.code).toBe(-32601);
    expect(answers.find((m) => m.id === null).error.code).toBe(-32700);
    expect(seen.hello).toEqual([]);
    expect((seen.refused as { reason: string }[]).map((r) => r.reason).sort()).toEqual(['invalid_frame', 'invalid_params', 'invalid_params', 'unknown_method']);
  });

  test('a handler that throws answers with errorToRpc; the answer is a remote failure on the caller', async () => {
    const { aPeer } = setup({ bHandlers: { add: () => { throw new Error('boom'); } } });
    const err = (await aPeer.request('add', { a: 1, b: 1 }).catch((e) => e)) as RpcPeerError;
    expect(err.kind).toBe('remote');
    expect(err.info.rpc?.code).toBe(-32603);
    expect(err.message).toBe('boom');
  });

  test('validateResult refuses an answer that does not match the result schema', async () => {
    const { aPeer } = setup({ bHandlers: { add: () => ({ sum: 'x' }) as never } });
    expect(await aPeer.request('add', { a: 1, b: 1 })).toEqual({ sum: 'x' } as never);
    const err = (await aPeer.request('add', { a: 1, b: 1 }, { validateResult: true }).catch((e) => e)) as RpcPeerError;
    expect(err.kind).toBe('bad_result');
  });
});

// Handler tables are typed from the schemas: these must not compile.
function typeChecks(): void {
  // @ts-expect-error a handler table without `hello`
  const missing: HandlerTable<typeof AtoB> = { add: ({ a, b }) => ({ sum: a + b }), slow: async () => ({ done: true }), stop: () => {} };
  const wrong: HandlerTable<typeof AtoB> = {
    // @ts-expect-error params of `add` are numbers
    add: (p: { a: string; b: string }) => ({ sum: Number(p.a) }),
    slow: async () => ({ done: true }),
    stop: () => {},
    hello: () => {},
  };
  void missing;
  void wrong;
}
void typeChecks;
