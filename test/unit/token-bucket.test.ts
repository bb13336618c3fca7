/** The one token bucket the extension's rate limits use (server/protocol/token-bucket.ts). */
import { expect, test } from 'bun:test';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';

test('a burst, then the rate; never above the burst; the wait says when a cost is held', () => {
  const b = new TokenBucket(3, 2, 0);
  for (let i = 0; i < 3; i++) {
    expect(b.waitMs(1, 0)).toBe(0);
    b.take();
  }
  expect(b.waitMs(1, 0)).toBe(500); // 2 a second: one token in 500 ms
  expect(b.waitMs(1, 500)).toBe(0);
  expect(b.level(60_000)).toBe(3); // refilled up to the burst, not beyond
  b.take(3);
  expect(b.waitMs(2, 60_000)).toBe(1000); // a cost of 2 at 2 a second
});
