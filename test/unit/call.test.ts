/** tools/call.ts, the one call path: resolve → off? → validate → gate → ask? → dispatch → audit. */
import { expect, test } from 'bun:test';
import { callTool } from '../../server/tools/call.ts';
import { callPathParts } from './call-path.fixture.ts';

test('an unknown tool is unknown_tool, and nothing is dispatched', async () => {
  const { deps, calls } = await callPathParts();
  const r = await callTool(deps, 'notes_nope', {}, { transport: 'rest' });
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.error.code).toBe('unknown_tool');
  expect(calls.dispatched).toEqual([]);
});

test('an off tool is refused before validation or asking, and the refusal is audited', async () => {
  const { deps, calls, config, catalog, audit } = await callPathParts();
  await config.setToolPermission('notes', 'get', 'off');
  catalog.rebuild();
  const r = await callTool(deps, 'notes_get', { id: 'not even valid' }, { transport: 'rest' });
  expect(r.ok ? null : r.error.code).toBe('permission_off');
  expect(calls.asked).toEqual([]);
  expect(calls.dispatched).toEqual([]);
  expect(audit.query({ limit: 5 })[0]).toMatchObject({ tool: 'notes_get', success: false, error: { code: 'permission_off' } });
});

test('bad arguments are invalid_arguments naming the path, before the user is asked', async () => {
  const { deps, calls } = await callPathParts();
  const r = await callTool(deps, 'notes_get', { id: 'x' }, { transport: 'mcp' });
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe('invalid_arguments');
    expect(r.error.status).toBe(400);
    expect(r.error.extra.path).toBe('/id');
  }
  expect(calls.asked).toEqual([]);
});

test('ask: the user is asked; a denial is permission_denied and nothing runs', async () => {
  const { deps, calls } = await callPathParts({ decision: 'deny' });
  const r = await callTool(deps, 'notes_get', { id: 1 }, { transport: 'rest' });
  expect(r.ok ? null : r.error.code).toBe('permission_denied');
  expect(calls.asked).toEqual([{ tool: 'notes_get' }]);
  expect(calls.dispatched).toEqual([]);
});

test('ask with no tab of the plugin open: refused unasked (no_matching_tab), nothing runs', async () => {
  const { deps, calls } = await callPathParts({ decision: 'allow' });
  (deps.hub as { tabsFor: unknown }).tabsFor = () => ({ state: 'closed', tabs: [] });
  const r = await callTool(deps, 'notes_get', { id: 1 }, { transport: 'rest' });
  expect(r.ok ? null : [r.error.code, r.error.extra.retryable]).toEqual(['no_matching_tab', true]);
  expect(calls.asked).toEqual([]);
  expect(calls.dispatched).toEqual([]);
});

test('allowed: dispatched with the plugin\'s short name, the value comes back, and success is audited', async () => {
  const { deps, calls, audit } = await callPathParts({ value: { title: 'Note 1' } });
  const r = await callTool(deps, 'notes_get', { id: 1 }, { transport: 'rest' });
  expect(r.ok && r.value).toEqual({ title: 'Note 1' });
  expect(calls.dispatched).toEqual([{ plugin: 'notes', wireName: 'get', fullName: 'notes_get', input: { id: 1 } }]);
  expect(audit.query({ limit: 1 })[0]).toMatchObject({ tool: 'notes_get', plugin: 'notes', success: true });
});

test('a built-in auto tool runs without asking; a server-served one never reaches the hub\'s dispatch', async () => {
  const { deps, calls } = await callPathParts();
  expect((await callTool(deps, 'browser_list_tabs', {}, { transport: 'rest' })).ok).toBe(true);
  expect(calls.asked).toEqual([]);
  expect(calls.dispatched.map((d) => d.fullName)).toEqual(['browser_list_tabs']);
  const served = await callTool(deps, 'plugin_list_tabs', {}, { transport: 'rest' });
  expect(served.ok && served.value).toMatchObject({ plugins: [{ plugin: 'notes', state: 'ready', tabs: [{ tabId: 7 }] }] });
  expect(calls.dispatched.length).toBe(1);
});

test('once shutdown began, calls are refused with server_shutting_down', async () => {
  const { deps } = await callPathParts();
  deps.calls.stopping = true;
  const r = await callTool(deps, 'browser_list_tabs', {}, { transport: 'rest' });
  expect(r.ok ? null : r.error.code).toBe('server_shutting_down');
});
