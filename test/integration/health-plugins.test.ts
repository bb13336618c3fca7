/**
 * /health with a loaded plugin and a connected extension: each pluginDetails entry carries every
 * reference field (tools with prefixed names, tab state + tabs from the extension, source,
 * sdkVersion, logBufferSize), and the counts follow.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: 'list' }, { name: 'add' }] }], permissions: { notes: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;

test('pluginDetails: tools, tab state, tabs, source, sdkVersion, logBufferSize', async () => {
  const tab = { tabId: 7, url: 'http://127.0.0.1/notes', title: 'Notes', ready: true };
  const ack = await ext.request('tab.stateChanged', { plugin: 'notes', state: 'ready', tabs: [tab] });
  expect(ack.error).toBeUndefined();
  ext.notify('plugin.log', { entries: [{ plugin: 'notes', level: 'info', message: 'hello', ts: Date.now() }] });
  let h: any;
  for (let i = 0; i < 100; i++) {
    h = await health();
    if (h.pluginDetails[0]?.logBufferSize > 0) break;
    await Bun.sleep(10);
  }
  expect(h.extensionConnected).toBe(true);
  expect(h.extensionConnections).toBe(1);
  expect(h.plugins).toBe(1);
  expect(h.pluginToolCount).toBe(2);
  expect(h.toolCount).toBe(h.browserToolCount + 2);
  expect(h.pluginDetails).toHaveLength(1);
  const d = h.pluginDetails[0];
  expect(d).toMatchObject({ name: 'notes', displayName: 'Notes', toolCount: 2, tabState: 'ready', tabs: [tab], source: 'local', sdkVersion: '0.1.0' });
  expect([...d.tools].sort()).toEqual(['notes_add', 'notes_list']);
  expect(d.logBufferSize).toBe(1);
  expect(d).not.toHaveProperty('iconSvg'); // present only when the plugin has one

  // The tab closes: health follows the extension's report.
  await ext.request('tab.stateChanged', { plugin: 'notes', state: 'closed', tabs: [] });
  const after = await health();
  expect(after.pluginDetails[0]).toMatchObject({ tabState: 'closed', tabs: [] });
});
