/**
 * "Always allow" on a page tool's card is for that one origin (scheme, host and port): another
 * origin's tools, in another tab or in the same tab after it moved there, still ask, and a call of
 * theirs waits for the user. A new origin never starts at auto.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);
let root = '';
let srv: TestServer;
let ext: FakeExtension;
const ran: string[] = [];
const A = 'https://a.example';
const B = 'https://b.example';
const A_OTHER_PORT = 'https://a.example:8443';

async function update(tabId: number, url: string): Promise<void> {
  const m = await ext.request('pageTools.update', { tabId, url, tools: [{ name: 'do', description: 'does', inputSchema: { type: 'object' } }] });
  if (m.error) throw new Error(JSON.stringify(m.error));
}
const call = (name: string) => fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
const permission = (name: string) => srv.ctx.catalog.current().get(name)?.permission;

async function waitingFor(tool: string): Promise<{ id: string; plugin: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const a = srv.ctx.hub.confirmations.list().find((x) => x.tool === tool);
    if (a) return a;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for an approval of ${tool}`);
    await Bun.sleep(20);
  }
}

beforeAll(async () => {
  root = tempDir('opentabs-page-origin-allow-');
  srv = await startTestServer({ configDir: root });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  for (const o of [A, B, A_OTHER_PORT]) ext.onDispatch(`page:${o}_do`, (p) => (ran.push(`${p.tabId} ${p.plugin}`), { value: { content: [{ type: 'text', text: 'done' }] } }));
  await update(3, `${A}/app`);
  await update(4, `${B}/app`);
  await update(5, `${A_OTHER_PORT}/app`);
  await update(6, `${A}/other`);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (root) removeDir(root);
});

test('new origins ask', () => {
  for (const n of ['tab3_do', 'tab4_do', 'tab5_do', 'tab6_do']) expect(permission(n)).toBe('ask');
});

test('"Always allow" on one card allows that origin only', async () => {
  const pending = call('tab3_do');
  const card = await waitingFor('tab3_do');
  expect(card.plugin).toBe(`page:${A}`);
  ext.confirm(card.id, 'allow', true);
  expect((await pending).status).toBe(200);
  expect(srv.ctx.config.get().pageOrigins).toEqual({ [A]: 'auto' });
  // The same origin in another tab runs without asking; other origins (another port too) still ask.
  expect(permission('tab6_do')).toBe('auto');
  expect(permission('tab4_do')).toBe('ask');
  expect(permission('tab5_do')).toBe('ask');
  const other = call('tab4_do');
  const otherCard = await waitingFor('tab4_do');
  expect(ran).toEqual([`3 page:${A}`]);
  ext.confirm(otherCard.id, 'deny');
  expect((await other).status).toBe(403);
  expect(ran).toEqual([`3 page:${A}`]);
});

test('a tab that moved to another origin does not keep the allowed one', async () => {
  await update(3, `${B}/elsewhere`);
  expect(permission('tab3_do')).toBe('ask');
  const pending = call('tab3_do');
  const card = await waitingFor('tab3_do');
  expect(card.plugin).toBe(`page:${B}`);
  ext.confirm(card.id, 'deny');
  expect((await pending).status).toBe(403);
  expect(ran).toEqual([`3 page:${A}`]);
});
