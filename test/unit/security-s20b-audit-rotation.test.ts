/**
 * A folder another program put at audit.log.1 (or audit-decisions.log.1) made every rotation
 * fail: once audit.log reached its size, no call was recorded any more. Entries now go on being
 * appended to audit.log, and stderr names the folder once.
 */
import { afterEach, expect, spyOn, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../server/state/audit.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('a folder at audit.log.1 and audit-decisions.log.1: every call is still recorded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-s20b-rot-'));
  dirs.push(dir);
  for (const name of ['audit.log.1', 'audit-decisions.log.1']) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'keep'), 'x');
  }
  const said: string[] = [];
  const spy = spyOn(console, 'error').mockImplementation((...a: unknown[]) => void said.push(a.join(' ')));
  try {
    const log = await AuditLog.open(dir, 400, 50);
    for (let i = 0; i < 20; i++) {
      await log.record({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), tool: `t_${i}`, plugin: 't', success: true, durationMs: 1, approval: 'allowed' });
    }
    await log.close();
  } finally {
    spy.mockRestore();
  }
  for (const name of ['audit.log', 'audit-decisions.log']) {
    const tools = readFileSync(join(dir, name), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { tool: string }).tool);
    expect([name, tools.length, tools[19]]).toEqual([name, 20, 't_19']);
  }
  expect(said.filter((l) => l.includes(`${join(dir, 'audit.log')}.1 is a folder`))).toHaveLength(1);
  expect(said.filter((l) => l.includes(`${join(dir, 'audit-decisions.log')}.1 is a folder`))).toHaveLength(1);
});
