/** server/tools/gate.ts: at most N in flight per key, refused (never queued) beyond, and release is idempotent. */
import { expect, test } from 'bun:test';
import { ConcurrencyGate } from '../../server/tools/gate.ts';

test('slots per key, refusal at the limit, and idempotent release', () => {
  const g = new ConcurrencyGate();
  const a1 = g.tryAcquire('a', 2);
  const a2 = g.tryAcquire('a', 2);
  expect(a1 && a2).toBeTruthy();
  expect(g.tryAcquire('a', 2)).toBeNull();
  // Another plugin is not affected by a's calls.
  expect(g.tryAcquire('b', 2)).not.toBeNull();
  a1!();
  a1!();
  expect(g.count('a')).toBe(1);
  const a3 = g.tryAcquire('a', 2);
  expect(a3).not.toBeNull();
  expect(g.tryAcquire('a', 2)).toBeNull();
  a2!();
  a3!();
  expect(g.count('a')).toBe(0);
});

test('a limit of 0 refuses everything', () => {
  expect(new ConcurrencyGate().tryAcquire('x', 0)).toBeNull();
});
