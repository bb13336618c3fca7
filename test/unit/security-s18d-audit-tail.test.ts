/**
 * audit.log is read from its end at every start (synchronously, before the port is bound) and
 * again for the last 24 hours' count. A line was gathered by copying everything read so far once
 * per 64 KB step: one 20 MB line — what a version that did not bound audit entries wrote for one
 * call with a 10 MB argument name — held every later start ≈ 24 s, a 100 MB one minutes. Lines
 * over MAX_LINE_BYTES are now skipped without being gathered, and the others are put together
 * once each.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAuditTail } from '../../server/state/audit.ts';
import { forEachLineFromEnd, forEachLineFromEndSync, MAX_LINE_BYTES } from '../../server/state/audit-tail.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-s18d-tail-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry = (tool: string, message?: string) =>
  JSON.stringify({ timestamp: '2026-11-27T10:00:00.000Z', tool, plugin: 'p', success: message === undefined, durationMs: 1, ...(message !== undefined ? { error: { code: 'x', message } } : {}) });

test('an audit line over the limit is skipped; the entries around it are read', () => {
  const path = join(dir, 'audit.log');
  writeFileSync(path, [entry('first'), entry('huge', 'm'.repeat(MAX_LINE_BYTES + 10)), entry('last')].join('\n') + '\n');
  expect(readAuditTail(path, 500).map((e) => e.tool)).toEqual(['first', 'last']);
});

test('a first line over the limit (no newline before it) is skipped too', () => {
  const path = join(dir, 'audit.log');
  writeFileSync(path, [entry('huge', 'm'.repeat(3 * MAX_LINE_BYTES)), entry('last')].join('\n') + '\n');
  expect(readAuditTail(path, 500).map((e) => e.tool)).toEqual(['last']);
});

test('lines under the limit are read whole, across many reads and with multi-byte text cut between reads', async () => {
  const path = join(dir, 'audit.log');
  // Lines of every length around the 64 KB read size, of 3-byte characters so some reads end inside one.
  const lines = [1, 100, 65_535, 65_536, 65_537, 200_000, MAX_LINE_BYTES - 200].map((n, i) => entry(`t${i}`, '€'.repeat(Math.floor(n / 3))));
  writeFileSync(path, lines.join('\n') + '\n');
  const seen: string[] = [];
  forEachLineFromEndSync(path, (l) => (seen.push(l), true));
  expect(seen).toEqual([...lines].reverse());
  const seenAsync: string[] = [];
  await forEachLineFromEnd(path, (l) => (seenAsync.push(l), true));
  expect(seenAsync).toEqual([...lines].reverse());
});

test('a line of exactly the limit is read; one byte more is not', () => {
  const path = join(dir, 'audit.log');
  const at = 'x'.repeat(MAX_LINE_BYTES);
  writeFileSync(path, `${at}\n${at}y\nlast\n`);
  const seen: string[] = [];
  forEachLineFromEndSync(path, (l) => (seen.push(l), true));
  expect(seen).toEqual(['last', at]);
});
