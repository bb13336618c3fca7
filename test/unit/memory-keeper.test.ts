/**
 * The memory keeper (server/state/memory.ts): once requests stop after a burst, it runs one full
 * collection (so freed memory can go back to the system), and stop() ends its timer.
 */
import { expect, test } from 'bun:test';
import { startMemoryKeeper } from '../../server/state/memory.ts';

test('a burst of requests followed by quiet leads to one full collection; stop() ends it', async () => {
  const keeper = startMemoryKeeper(5);
  try {
    expect(keeper.collections).toBe(0);
    for (let i = 0; i < 100; i++) keeper.touch();
    // Bounded wait for the tick that sees the quiet (no timing asserted, only that it happens).
    for (let i = 0; i < 400 && keeper.collections === 0; i++) await Bun.sleep(5);
    expect(keeper.collections).toBeGreaterThanOrEqual(1);
  } finally {
    keeper.stop();
  }
  const after = keeper.collections;
  keeper.touch();
  await Bun.sleep(50);
  expect(keeper.collections).toBe(after);
});
