/** state/audit-ring.ts: the audit ring as columns — order, wrap-around, exact timestamps, and no object kept per call. */
import { expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import { AuditRing } from '../../server/state/audit-ring.ts';
import type { AuditEntry } from '../../server/state/audit-entry.ts';

const at = (i: number) => new Date(Date.UTC(2026, 10, 26, 12, 0, 0, i)).toISOString();
const entry = (i: number, extra: Partial<AuditEntry> = {}): AuditEntry => ({ timestamp: at(i), tool: 'notes_get', plugin: 'notes', success: i % 3 !== 0, durationMs: i, ...extra });

test('newest first, only the last `capacity` entries, each as it was pushed', () => {
  const ring = new AuditRing(4);
  for (let i = 1; i <= 6; i++) ring.push(entry(i, i === 5 ? { success: false, error: { code: 'tool_error', message: 'boom', category: 'internal' } } : {}));
  expect(ring.size).toBe(4);
  const all = ring.newestFirst(10, () => true);
  expect(all.map((e) => e.durationMs)).toEqual([6, 5, 4, 3]);
  expect(all[1]).toEqual(entry(5, { success: false, error: { code: 'tool_error', message: 'boom', category: 'internal' } }));
  expect(ring.newestFirst(1, (_t, _p, ok) => !ok).map((e) => e.durationMs)).toEqual([6]);
  expect(ring.totals()).toEqual({ total: 4, success: 1, durationMs: 18 });
});

test('a timestamp that is not toISOString\'s own form comes back as it was written', () => {
  const ring = new AuditRing(3);
  for (const timestamp of ['2026-11-26T12:00:00Z', 'yesterday', at(7)]) ring.push(entry(1, { timestamp }));
  expect(ring.newestFirst(3, () => true).map((e) => e.timestamp)).toEqual([at(7), 'yesterday', '2026-11-26T12:00:00Z']);
});

test('pushing keeps no object per call (they would pin heap blocks the collector never compacts)', () => {
  const ring = new AuditRing(500);
  const objects = () => {
    Bun.gc(true);
    return (heapStats().objectTypeCounts as Record<string, number>).Object ?? 0;
  };
  const before = objects();
  // 2,500 calls, each with a fresh entry object and timestamp string, as the call path makes them;
  // a ring of objects would keep 500 of them.
  for (let i = 0; i < 2500; i++) ring.push(entry(i));
  expect(objects() - before).toBeLessThan(50);
  expect(ring.size).toBe(500);
});
