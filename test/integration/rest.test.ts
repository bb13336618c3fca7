/**
 * REST: GET /tools (+ ?plugin=) and POST /tools/:name/call with every status the CLI relies on.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;

const post = (path: string, body: string | undefined, headers: Record<string, string> = {}) =>
  fetch(`${srv.url}${path}`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json', ...headers }, body });
const call = (name: string, body: unknown) => post(`/tools/${name}/call`, JSON.stringify(body));

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'crm', tools: [{ name: 'find', inputSchema: { type: 'object', properties: { q: { type: 'string', minLength: 1 }, opts: { type: 'object', properties: { n: { type: 'integer' } } } }, required: ['q'] } }, { name: 'nuke' }] }],
    permissions: { crm: { default: 'auto', tools: { nuke: 'off' } } },
    limits: { dispatchTimeoutMs: 200 },
  });
});
afterAll(async () => {
  await srv?.stop();
});

describe('GET /tools', () => {
  test('requires the bearer token', async () => {
    expect((await fetch(`${srv.url}/tools`)).status).toBe(401);
  });

  test('lists name, description, plugin, permission, inputSchema; ?plugin= filters; unknown plugin → 404', async () => {
    const all = await (await fetch(`${srv.url}/tools`, { headers: srv.auth })).json();
    const find = all.tools.find((t: { name: string }) => t.name === 'crm_find');
    expect(find).toMatchObject({ plugin: 'crm', permission: 'auto', description: 'Tool find' });
    expect(find.inputSchema.required).toEqual(['q']);
    expect(all.tools.find((t: { name: string }) => t.name === 'crm_nuke').permission).toBe('off');
    expect(all.tools.some((t: { plugin: string }) => t.plugin === 'browser')).toBe(true);

    const crm = await (await fetch(`${srv.url}/tools?plugin=crm`, { headers: srv.auth })).json();
    expect(crm.tools.map((t: { name: string }) => t.name).sort()).toEqual(['crm_find', 'crm_nuke']);
    const browser = await (await fetch(`${srv.url}/tools?plugin=browser`, { headers: srv.auth })).json();
    expect(browser.tools.every((t: { plugin: string }) => t.plugin === 'browser')).toBe(true);
    const ghost = await fetch(`${srv.url}/tools?plugin=ghost`, { headers: srv.auth });
    expect(ghost.status).toBe(404);
    expect((await ghost.json()).error.code).toBe('unknown_plugin');
  });
});

describe('POST /tools/:name/call', () => {
  test('503 when the extension is not connected', async () => {
    const r = await call('crm_find', { arguments: { q: 'a' } });
    expect(r.status).toBe(503);
    expect((await r.json()).error.code).toBe('extension_not_connected');
  });

  test('200 / 404 / 400 / 403 / 504 and bad bodies', async () => {
    const ext = await FakeExtension.connect(srv.url, srv.secret);
    try {
      const ok = await call('crm_find', { arguments: { q: 'acme' }, tabId: 4 });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ result: { echo: { q: 'acme' }, tool: 'find', plugin: 'crm', tabId: 4 } });

      const unknown = await call('crm_nope', { arguments: {} });
      expect(unknown.status).toBe(404);
      expect((await unknown.json()).error.code).toBe('unknown_tool');

      const invalid = await call('crm_find', { arguments: { q: 'x', opts: { n: 1.5 } } });
      expect(invalid.status).toBe(400);
      const ie = (await invalid.json()).error;
      expect(ie).toMatchObject({ code: 'invalid_arguments', path: '/opts/n', category: 'validation' });
      expect(ie.message).toContain('/opts/n');

      const off = await call('crm_nuke', {});
      expect(off.status).toBe(403);
      expect((await off.json()).error.code).toBe('permission_off');

      ext.onDispatch('crm_find', hang);
      const slow = await call('crm_find', { arguments: { q: 'slow' } });
      expect(slow.status).toBe(504);
      expect((await slow.json()).error.code).toBe('timeout');

      const notJson = await post('/tools/crm_find/call', '{oops');
      expect(notJson.status).toBe(400);
      expect((await notJson.json()).error.code).toBe('invalid_json');

      const arr = await call('crm_find', [1, 2]);
      expect(arr.status).toBe(400);
      const badArgs = await call('crm_find', { arguments: 'q=1' });
      expect(badArgs.status).toBe(400);
      expect((await badArgs.json()).error.path).toBe('/arguments');
      const badTab = await call('crm_find', { arguments: { q: 'a' }, tabId: 'one' });
      expect((await badTab.json()).error.path).toBe('/tabId');
      const extraKey = await call('crm_find', { args: {} });
      expect(extraKey.status).toBe(400);

      // An empty body means no arguments (the schema then names the missing field).
      const empty = await post('/tools/crm_find/call', undefined);
      expect(empty.status).toBe(400);
      expect((await empty.json()).error.path).toBe('/q');

      const noAuth = await fetch(`${srv.url}/tools/crm_find/call`, { method: 'POST', body: '{}' });
      expect(noAuth.status).toBe(401);
    } finally {
      await ext.close();
    }
  });
});
