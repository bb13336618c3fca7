/**
 * The memory keeper (server/state/memory.ts): once requests stop after a burst, it runs one full
 * collection (so freed memory can go back to the system); after a quiet spell it gives memory
 * back once (Bun.shrink: compiled code dropped, free pages returned), and code compiled before
 * still runs correctly afterwards; a spell of many requests (a script or a load) is given back as
 * soon as it ends; stop() ends its timer.
 */
import { expect, test } from 'bun:test';
import { HEAVY_SPELL_REQUESTS, startMemoryKeeper } from '../../server/state/memory.ts';

/** Bounded wait for a condition the keeper's timer makes true (no timing is asserted). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await Bun.sleep(5);
}

test('a burst of requests followed by quiet leads to one full collection; stop() ends it', async () => {
  const keeper = startMemoryKeeper(5, 60_000);
  try {
    expect(keeper.collections).toBe(0);
    for (let i = 0; i < 100; i++) keeper.touch();
    await until(() => keeper.collections > 0);
    expect(keeper.collections).toBeGreaterThanOrEqual(1);
    // The CPU its collections took is counted (the bench reads it).
    expect(Number.isFinite(keeper.collectMs) && keeper.collectMs >= 0).toBe(true);
  } finally {
    keeper.stop();
  }
  const after = keeper.collections;
  keeper.touch();
  await Bun.sleep(50);
  expect(keeper.collections).toBe(after);
});

test('memory is given back once per quiet spell (start-up counts as one); code keeps working after it', async () => {
  // A function that has run hot enough to be compiled, to run again after the release.
  const sum = (n: number) => {
    let s = 0;
    for (let i = 0; i < n; i++) s += i % 7;
    return s;
  };
  const before = Array.from({ length: 2000 }, (_, i) => sum(i));
  const keeper = startMemoryKeeper(5, 30);
  try {
    // Start-up is the first spell: released without any request.
    await until(() => keeper.releases > 0);
    expect(keeper.releases).toBe(1);
    // Quiet goes on: no second release until requests come and stop again.
    await Bun.sleep(100);
    expect(keeper.releases).toBe(1);
    for (let i = 0; i < 10; i++) keeper.touch();
    await until(() => keeper.releases > 1);
    expect(keeper.releases).toBe(2);
    expect(Array.from({ length: 2000 }, (_, i) => sum(i))).toEqual(before);
  } finally {
    keeper.stop();
  }
});

test('a spell of HEAVY_SPELL_REQUESTS requests is given back as soon as it ends; a lighter one is only collected', async () => {
  // Start-up's own release waits a minute here: every release below comes from a spell ending.
  const keeper = startMemoryKeeper(5, 60_000);
  try {
    for (let i = 0; i < 10; i++) keeper.touch();
    await until(() => keeper.collections > 0);
    expect(keeper.collections).toBe(1);
    expect(keeper.releases).toBe(0);
    for (let i = 0; i < HEAVY_SPELL_REQUESTS; i++) keeper.touch();
    await until(() => keeper.releases > 0);
    expect(keeper.releases).toBe(1);
    // Released instead of collected; the quiet-spell release (a minute here) is still to come.
    await Bun.sleep(50);
    expect(keeper.collections).toBe(1);
    expect(keeper.releases).toBe(1);
  } finally {
    keeper.stop();
  }
});

test('after a heavy spell the quiet-spell release still comes', async () => {
  const keeper = startMemoryKeeper(5, 100);
  try {
    await until(() => keeper.releases > 0); // start-up's own
    for (let i = 0; i < HEAVY_SPELL_REQUESTS; i++) keeper.touch();
    await until(() => keeper.releases > 1); // as the spell ends
    await until(() => keeper.releases > 2); // after the quiet spell
    expect(keeper.releases).toBe(3);
  } finally {
    keeper.stop();
  }
});
