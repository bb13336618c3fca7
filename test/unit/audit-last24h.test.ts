/**
 * auditSummary.last24h counts every call of the last 24 hours, not only what the 500-entry ring
 * keeps: counted on record, and rebuilt from audit.log (and its rotated generation) on open.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, auditPath, type AuditEntry } from '../../server/state/audit.ts';
import { DayCounter } from '../../server/state/audit-day.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-audit24-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3_600_000;
const at = (msAgo: number, success: boolean, i = 0): AuditEntry => ({
  timestamp: new Date(Date.now() - msAgo).toISOString(),
  tool: `p_t${i % 3}`,
  plugin: 'p',
  success,
  durationMs: 3,
});

describe('last24h', () => {
  test('counts beyond the ring size, success and failure apart', async () => {
    const log = await AuditLog.open(dir, 100 * 1024 * 1024, 10);
    await log.dayLoaded;
    for (let i = 0; i < 700; i++) await log.record(at(i * 1000, i % 7 !== 0, i));
    const s = log.summary();
    expect(s.totalInvocations).toBe(10); // the ring
    expect(s.last24h).toEqual({ total: 700, success: 600, failure: 100 });
    await log.close();
  });

  test('calls older than 24 hours are not counted', async () => {
    const log = await AuditLog.open(dir, 100 * 1024 * 1024, 10);
    await log.dayLoaded;
    await log.record(at(25 * HOUR, true));
    await log.record(at(23 * HOUR, false));
    await log.record(at(1000, true));
    expect(log.summary().last24h).toEqual({ total: 2, success: 1, failure: 1 });
    await log.close();
  });

  test('rebuilt from audit.log and audit.log.1 on open, without counting anything twice', async () => {
    // Write through a log that rotates every ~40 KB, so entries span both generations.
    const first = await AuditLog.open(dir, 40 * 1024, 10);
    await first.dayLoaded;
    for (let i = 0; i < 300; i++) await first.record(at(30 * HOUR - i * 60_000, true, i)); // all older than 24 h … to 25 h ago
    for (let i = 0; i < 450; i++) await first.record(at(20 * HOUR - i * 1000, i % 3 !== 0, i));
    const expected = first.summary().last24h;
    expect(expected).toEqual({ total: 450, success: 300, failure: 150 });
    await first.close();

    const second = await AuditLog.open(dir, 40 * 1024, 10);
    // Start-up does not wait for the scan; the figure is complete once it finished.
    await second.dayLoaded;
    expect(second.summary().last24h).toEqual(expected);
    await second.record(at(0, true));
    expect(second.summary().last24h.total).toBe(451);
    await second.close();
  });

  test('malformed lines in the file are skipped', async () => {
    writeFileSync(auditPath(dir), `${JSON.stringify(at(1000, true))}\nnot json\n{"timestamp":"never","success":true}\n`);
    appendFileSync(auditPath(dir), `${JSON.stringify(at(2000, false))}\n`);
    const log = await AuditLog.open(dir, 100 * 1024 * 1024, 10);
    await log.dayLoaded;
    expect(log.summary().last24h).toEqual({ total: 2, success: 1, failure: 1 });
    await log.close();
  });
});

test('DayCounter keeps at most a day of minute buckets', () => {
  const c = new DayCounter();
  const now = Date.UTC(2026, 10, 24, 12, 0, 0);
  for (let m = 0; m < 3000; m++) c.add(now - m * 60_000, true);
  // 24 h × 60 minutes, plus the minute the window starts in.
  expect(c.counts(now).total).toBe(24 * 60 + 1);
});

describe('the start-up scan waits its turn', () => {
  test('the files are counted only once the given start-up work settles; calls recorded meanwhile count once', async () => {
    writeFileSync(auditPath(dir), Array.from({ length: 300 }, (_, i) => JSON.stringify(at(i * 60_000, i % 3 !== 0, i))).join('\n') + '\n');
    let release!: () => void;
    const startup = new Promise<void>((r) => (release = r));
    const log = await AuditLog.open(dir, 100 * 1024 * 1024, 10, startup);
    let loaded = false;
    void log.dayLoaded.then(() => (loaded = true));
    await Bun.sleep(50);
    expect(loaded).toBe(false);
    expect(log.summary().last24h.total).toBe(0);
    await log.record(at(0, true)); // recorded before the scan: counted by record, not by the scan
    release();
    await log.dayLoaded;
    expect(log.summary().last24h).toEqual({ total: 301, success: 201, failure: 100 });
    await log.close();
  });
});
