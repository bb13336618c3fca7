import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, auditPath, readAuditTail, type AuditEntry } from '../../server/state/audit.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-audit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry = (i: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(),
  tool: `p${i % 2}_t${i % 3}`,
  plugin: `p${i % 2}`,
  success: i % 4 !== 0,
  durationMs: i,
  ...(i % 4 === 0 ? { error: { code: 'tool_error', message: `fail ${i}`, category: 'internal' } } : {}),
  ...over,
});

const fileLines = (p: string) => readFileSync(p, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('AuditLog', () => {
  test('record appends to audit.log (0600) before resolving; query is newest first', async () => {
    const log = await AuditLog.open(dir, 1024 * 1024);
    for (let i = 1; i <= 5; i++) {
      await log.record(entry(i));
      expect(fileLines(auditPath(dir)).length).toBe(i);
    }
    expect(statSync(auditPath(dir)).mode & 0o777).toBe(0o600);
    expect(log.query({ limit: 50 }).map((e) => e.durationMs)).toEqual([5, 4, 3, 2, 1]);
    expect(log.query({ limit: 2 }).map((e) => e.durationMs)).toEqual([5, 4]);
    await log.close();
  });

  test('filters by plugin, tool and success', async () => {
    const log = await AuditLog.open(dir, 1024 * 1024);
    for (let i = 1; i <= 24; i++) await log.record(entry(i));
    expect(log.query({ limit: 50, plugin: 'p1' }).every((e) => e.plugin === 'p1')).toBe(true);
    expect(log.query({ limit: 50, plugin: 'p1' }).length).toBe(12);
    expect(log.query({ limit: 50, tool: 'p0_t0' }).every((e) => e.tool === 'p0_t0')).toBe(true);
    const failures = log.query({ limit: 50, success: false });
    expect(failures.length).toBe(6);
    expect(failures[0].error).toEqual({ code: 'tool_error', message: 'fail 24', category: 'internal' });
    expect(log.query({ limit: 50, plugin: 'nope' })).toEqual([]);
    await log.close();
  });

  test('ring keeps only the newest N entries', async () => {
    const log = await AuditLog.open(dir, 10 * 1024 * 1024, 10);
    for (let i = 1; i <= 35; i++) await log.record(entry(i));
    const all = log.query({ limit: 500 });
    expect(all.length).toBe(10);
    expect(all[0].durationMs).toBe(35);
    expect(all[9].durationMs).toBe(26);
    expect(log.summary().totalInvocations).toBe(10);
    await log.close();
  });

  test('summary counts totals, failures, last 24h and average duration', async () => {
    const log = await AuditLog.open(dir, 1024 * 1024);
    const now = Date.now();
    await log.record({ timestamp: new Date(now - 1000).toISOString(), tool: 'a_x', plugin: 'a', success: true, durationMs: 10 });
    await log.record({ timestamp: new Date(now - 2000).toISOString(), tool: 'a_x', plugin: 'a', success: false, durationMs: 30, error: { code: 'timeout', message: 't' } });
    await log.record({ timestamp: new Date(now - 3 * 86_400_000).toISOString(), tool: 'a_x', plugin: 'a', success: true, durationMs: 20 });
    expect(log.summary(now)).toEqual({
      totalInvocations: 3,
      successCount: 2,
      failureCount: 1,
      last24h: { total: 2, success: 1, failure: 1 },
      avgDurationMs: 20,
    });
    await log.close();
  });

  test('rotates to audit.log.1 (one generation) past rotateBytes', async () => {
    const log = await AuditLog.open(dir, 600);
    for (let i = 1; i <= 40; i++) await log.record(entry(i));
    await log.close();
    expect(existsSync(`${auditPath(dir)}.1`)).toBe(true);
    expect(existsSync(`${auditPath(dir)}.2`)).toBe(false);
    expect(statSync(auditPath(dir)).size).toBeLessThanOrEqual(600);
    expect(statSync(`${auditPath(dir)}.1`).size).toBeLessThanOrEqual(600);
    // The newest entry is the last line of the current file; the .1 file holds the previous span.
    const cur = fileLines(auditPath(dir));
    const old = fileLines(`${auditPath(dir)}.1`);
    expect(cur.at(-1).durationMs).toBe(40);
    expect(old.at(-1).durationMs).toBe(cur[0].durationMs - 1);
  });

  test('reopening refills the ring from the file tail (and audit.log.1 when needed)', async () => {
    const a = await AuditLog.open(dir, 600);
    for (let i = 1; i <= 12; i++) await a.record(entry(i));
    await a.close();
    const b = await AuditLog.open(dir, 600, 500);
    const got = b.query({ limit: 500 }).map((e) => e.durationMs);
    // Everything still on disk (current + one rotated generation), newest first, contiguous.
    expect(got[0]).toBe(12);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => 12 - i));
    expect(got.length).toBe(fileLines(auditPath(dir)).length + fileLines(`${auditPath(dir)}.1`).length);
    // New records append after the refilled ones.
    await b.record(entry(13));
    expect(b.query({ limit: 1 })[0].durationMs).toBe(13);
    await b.close();
  });

  test('readAuditTail reads only the last entries of a large file and skips bad lines', async () => {
    const p = join(dir, 'big.log');
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(JSON.stringify(entry(i)));
    lines.splice(19_990, 0, 'not json', '{"partial":');
    writeFileSync(p, lines.join('\n') + '\n');
    const tail = readAuditTail(p, 5);
    expect(tail.map((e) => e.durationMs)).toEqual([19_995, 19_996, 19_997, 19_998, 19_999]);
    const more = readAuditTail(p, 20);
    expect(more.length).toBe(18); // 20 lines, 2 of them unparseable
    expect(readAuditTail(join(dir, 'missing.log'), 5)).toEqual([]);
  });

  test('readAuditTail handles a file without a trailing newline and one smaller than a chunk', async () => {
    const p = join(dir, 'small.log');
    writeFileSync(p, [entry(1), entry(2), entry(3)].map((e) => JSON.stringify(e)).join('\n'));
    expect((readAuditTail(p, 10)).map((e) => e.durationMs)).toEqual([1, 2, 3]);
  });

  test('entries are stored with known fields only', async () => {
    const log = await AuditLog.open(dir, 1024 * 1024);
    await log.record({ ...entry(1), extra: 'drop me', durationMs: 12.7 } as AuditEntry);
    expect(fileLines(auditPath(dir))[0]).toEqual({ timestamp: entry(1).timestamp, tool: 'p1_t1', plugin: 'p1', success: true, durationMs: 13 });
    await log.close();
  });
});

describe('AuditLog after close', () => {
  test('a record arriving during shutdown still reaches the file', async () => {
    const log = await AuditLog.open(dir, 1024 * 1024);
    await log.record(entry(1));
    await log.close();
    await log.record(entry(2));
    expect(fileLines(auditPath(dir)).map((e) => e.durationMs)).toEqual([1, 2]);
  });
});
