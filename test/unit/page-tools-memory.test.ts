/**
 * tools/page-tools.ts: a page that sends its tools again and again cannot grow the server's memory.
 * Every schema a page sends is compiled to check it; an Ajv instance keeps every function it ever
 * compiled, so one instance for all checks grew by ≈ 10 KB per schema received.
 */
import { expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import { PageToolRegistry } from '../../server/tools/page-tools.ts';
import type { ConfigStore } from '../../server/state/config.ts';

test('600 tool lists with a new schema each leave no compiled checks behind', () => {
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
  const halfway = functions();
  for (let i = 301; i <= 600; i++) expect(send(i).refused).toEqual([]);
  expect(rebuilds).toBe(601);
  // Kept checks would add one compiled function per list (300 more over the second half); one
  // checking instance's worth at most (64) may be live at any time. Measured over the second half,
  // so what other tests in the same process do while the first warms up does not count.
  expect(functions() - halfway).toBeLessThan(100);
});
