/**
 * config.json pageToolsAllowed: the page tools a card's Always allow covers per origin (name →
 * hash of what they were). Bad entries are dropped on reading, a new Always allow adds to what was
 * allowed (at most PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN names, the oldest first out), auto chosen in
 * the settings forgets it (auto for every tool), and an origin already auto for every tool stays so.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigStore, configPath, normalizeConfig } from '../../server/state/config.ts';
import { PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN } from '../../server/limits.ts';
import { pageToolHash } from '../../server/tools/page-tools.ts';

const A = 'https://shop.example';
const h1 = pageToolHash('lookup', 'Look up an order', '{"type":"object"}');
const h2 = pageToolHash('lookup', 'Look up an order and send it away', '{"type":"object"}');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opentabs-allowed-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const onDisk = () => JSON.parse(readFileSync(configPath(dir), 'utf8'));

test('the hash covers the name, the description and the schema text', () => {
  expect(h1).toMatch(/^[0-9a-f]{64}$/);
  expect(h1).not.toBe(h2);
  expect(pageToolHash('lookup', 'Look up an order', '{"type":"object","properties":{}}')).not.toBe(h1);
  expect(pageToolHash('lookup2', 'Look up an order', '{"type":"object"}')).not.toBe(h1);
});

test('reading drops what is not an origin, a name or a hash, and keeps the rest', () => {
  const c = normalizeConfig({ pageToolsAllowed: { [A]: { lookup: h1, bad: 'nothex', __proto__x: 5 }, 'not an origin': { x: h1 }, 'https://b.example': 'nope' } });
  expect(c.pageToolsAllowed).toEqual({ [A]: { lookup: h1 } });
  expect(normalizeConfig({ pageToolsAllowed: [] }).pageToolsAllowed).toBeUndefined();
});

test('Always allow adds to what was allowed, keeps auto for the origin, and the settings\' auto forgets it', async () => {
  const store = await ConfigStore.open(dir);
  await store.allowPageTools(A, { lookup: h1 });
  await store.allowPageTools(A, { status: h2 });
  expect(onDisk().pageOrigins).toEqual({ [A]: 'auto' });
  expect(store.pageToolsAllowed(A)).toEqual({ lookup: h1, status: h2 });
  await store.allowPageTools(A, { lookup: h2 });
  expect(store.pageToolsAllowed(A)).toEqual({ status: h2, lookup: h2 });
  await store.setOriginPermission(A, 'auto');
  expect(store.pageToolsAllowed(A)).toBeUndefined();
  // Already auto for every tool: a card's Always allow does not narrow it.
  await store.allowPageTools(A, { lookup: h1 });
  expect(store.pageToolsAllowed(A)).toBeUndefined();
  expect(store.originPermission(A)).toBe('auto');
});

test('at most PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN names per origin, the oldest first out', async () => {
  writeFileSync(configPath(dir), JSON.stringify({ pageOrigins: { [A]: 'auto' }, pageToolsAllowed: { [A]: { first: h1 } } }));
  const store = await ConfigStore.open(dir);
  const many: Record<string, string> = {};
  for (let i = 0; i < PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN; i++) many[`t${i}`] = h2;
  await store.allowPageTools(A, many);
  const kept = Object.keys(store.pageToolsAllowed(A)!);
  expect(kept).toHaveLength(PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN);
  expect(kept).not.toContain('first');
});
