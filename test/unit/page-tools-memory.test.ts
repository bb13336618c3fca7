/**
 * tools/page-tools.ts: a page that sends its tools again and again cannot grow the server's memory.
 * Every schema a page sends is compiled to check it; an Ajv instance keeps every function it ever
 * compiled, so one instance for all checks grew by ≈ 10 KB per schema received.
 */
import { expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import { PageToolRegistry } from '../../server/tools/page-tools.ts';
import type { ConfigStore } from '../../server/state/config.ts';

test('900 tool lists with a new schema each leave no compiled checks behind', () => {
  let rebuilds = 0;
  const registry = new PageToolRegistry({ current: () => ({ get: () => undefined }), rebuild: () => void rebuilds++ }, {} as ConfigStore);
  const send = (i: number) =>
    registry.update(7, 'https://evil.example/', [{ name: 'todo', description: 'x', inputSchema: { type: 'object', properties: { [`f${i}`]: { type: 'string', maxLength: i } } } }]);
  send(0);
  const functions = () => {
    Bun.gc(true);
    return (heapStats().objectTypeCounts as Record<string, number>).Function ?? 0;
  };
  for (let i = 1; i <= 300; i++) expect(send(i).refused).toEqual([]);
  const warm = functions();
  for (let i = 301; i <= 900; i++) expect(send(i).refused).toEqual([]);
  expect(rebuilds).toBe(901);
  // Kept checks would add one compiled function per list (600 more after the first 300); one
  // checking instance's worth at most (64) may be live at any time. Counted after the first 300,
  // so warm-up does not count, with room for what other tests in the same process allocate.
  expect(functions() - warm).toBeLessThan(250);
});
