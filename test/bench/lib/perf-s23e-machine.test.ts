/**
 * machine.ts reads /proc for real: the shares it reports are fractions of the cores, the busiest
 * thread is one of the processes it was given, and the value of the measured function comes back.
 *   bun test test/bench/lib/perf-s23e-machine.test.ts
 */
import { expect, test } from 'bun:test';
import { cpus } from 'node:os';
import { machineDuring } from './machine.ts';

test('machineDuring: the shares are fractions of the cores and the busiest thread is ours', async () => {
  const groups = new Map([[process.pid, 'client']]);
  const { value, machine } = await machineDuring(groups, 10, async () => {
    // Work this thread for a while (bounded by iterations, not time) so it gathers clock ticks.
    let x = 0;
    for (let i = 0; i < 30_000_000; i++) x = (x + i * 7) % 1_000_003;
    return x;
  });
  expect(typeof value).toBe('number');
  expect(machine.cores).toBe(cpus().length);
  for (const share of [machine.busy, machine.ours]) {
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1.05); // ticks are read at 10 ms granularity
  }
  expect(machine.contextSwitchesPerCall).toBeGreaterThanOrEqual(0);
  if (machine.busiestThread.core > 0) expect(machine.busiestThread.name.startsWith('client: ')).toBe(true);
});
