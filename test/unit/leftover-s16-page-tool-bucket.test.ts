/**
 * tools/page-tools.ts: the per-tab budget for checking new page-tool schemas is the shared
 * TokenBucket (server/protocol/token-bucket.ts), like every other rate limit. With the clock held
 * still (setSystemTime), the figures are exact: a tab checks PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES of
 * new schema text at once, the rest is refused with the time after which the budget covers all of
 * it, and after that time the same list is taken whole.
 */
import { afterEach, expect, setSystemTime, test } from 'bun:test';
import { PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES, PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND, PAGE_TOOL_SCHEMA_MAX_BYTES, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';
import { TokenBucket } from '../../server/protocol/token-bucket.ts';
import type { ConfigStore } from '../../server/state/config.ts';
import { PageToolRegistry } from '../../server/tools/page-tools.ts';

afterEach(() => {
  setSystemTime();
});

/** Close to PAGE_TOOL_SCHEMA_MAX_BYTES of flat string properties, different for every `salt`. */
function bigSchema(salt: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(properties).length < PAGE_TOOL_SCHEMA_MAX_BYTES - 200; i++) properties[`p${i}_${salt}`] = { type: 'string', minLength: 1 };
  return { type: 'object', properties };
}
const list = (salt: string) => Array.from({ length: PAGE_TOOLS_MAX_PER_TAB }, (_, i) => ({ name: `t${i}`, description: 'x', inputSchema: bigSchema(`${salt}_${i}`) }));
const textOf = (tool: { inputSchema: unknown }) => JSON.stringify(tool.inputSchema).length;

test('the schema budget is a TokenBucket per tab: burst, exact retry time, refill', () => {
  const t0 = Date.UTC(2026, 0, 1);
  setSystemTime(new Date(t0));
  const registry = new PageToolRegistry({ current: () => ({ get: () => undefined }), rebuild: () => {} }, {} as ConfigStore);

  // New lists until the burst is spent; the clock does not move, so nothing refills.
  let spent = 0;
  let refused: { name: string; reason: string; retryAfterMs?: number }[] = [];
  let last: ReturnType<typeof list> = [];
  for (let k = 0; k < 100 && refused.length === 0; k++) {
    last = list(`l${k}`);
    refused = registry.update(7, 'https://busy.example/', last).refused;
    if (refused.length === 0) spent += last.reduce((n, t) => n + textOf(t), 0);
  }
  expect(refused.length).toBeGreaterThan(0);

  // What the last list could still have checked, and what it left unchecked.
  const byName = new Map(last.map((t) => [t.name, t]));
  const unchecked = refused.reduce((n, r) => n + textOf(byName.get(r.name)!), 0);
  const checkedNow = last.filter((t) => !refused.some((r) => r.name === t.name)).reduce((n, t) => n + textOf(t), 0);
  const left = PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES - spent - checkedNow;
  const expected = Math.ceil(((unchecked - left) / PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND) * 1000);
  for (const r of refused) {
    expect(r.reason).toContain('not checked yet');
    expect(r.retryAfterMs).toBe(expected);
  }

  // The budget is the shared bucket, at exactly what is left.
  const bucket = (registry as unknown as { budgets: Map<number, unknown> }).budgets.get(7);
  expect(bucket).toBeInstanceOf(TokenBucket);
  expect((bucket as TokenBucket).level(t0)).toBe(left);

  // A millisecond before the retry time the budget does not cover them yet; at it, the list is taken whole.
  expect((bucket as TokenBucket).waitMs(unchecked, t0 + expected - 1)).toBeGreaterThan(0);
  setSystemTime(new Date(t0 + expected));
  expect(registry.update(7, 'https://busy.example/', last).refused).toEqual([]);

  // Another tab has a full budget of its own.
  expect(registry.update(8, 'https://calm.example/', list('other')).refused).toEqual([]);
});
