/**
 * `opentabs approvals` named where a call runs by its URL only: a plugin call that names no tab,
 * with two tabs of the plugin open (two accounts of the app), showed an empty TARGET, while the
 * side panel's card lists the tabs it may run in. Approving by id from the terminal, the user did
 * not see which accounts the call could reach. The CLI now names the tab, the page, the domain
 * when the URL does not say it all, and every candidate tab.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'mail', tools: [{ name: 'send' }] }], permissions: { mail: { default: 'ask' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.notify('tab.syncAll', {
    plugins: {
      mail: {
        state: 'ready',
        tabs: [
          { tabId: 11, url: 'https://mail.example/u/0/inbox', title: 'Work', ready: true },
          { tabId: 12, url: 'https://mail.example/u/1/inbox', title: 'Personal', ready: true },
        ],
      },
    },
  });
  for (let i = 0; i < 250 && srv.ctx.hub.tabsFor('mail').tabs.length < 2; i++) await Bun.sleep(20);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

test('a plugin call that names no tab lists every tab it may run in', async () => {
  const call = fetch(`${srv.url}/tools/mail_send/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' }).then((r) => r.status);
  for (let i = 0; i < 300 && srv.ctx.hub.confirmations.list().length === 0; i++) await Bun.sleep(20);
  const [waiting] = srv.ctx.hub.confirmations.list();
  expect(waiting?.target?.candidateTabs).toHaveLength(2);
  const r = await runCli(['approvals', '--port', String(srv.port)], { configDir: srv.configDir });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('one of tab 11 https://mail.example/u/0/inbox, tab 12 https://mail.example/u/1/inbox');
  expect((await runCli(['deny', waiting!.id, '--port', String(srv.port)], { configDir: srv.configDir })).code).toBe(0);
  expect(await call).toBe(403);
});

test('a URL argument written with look-alike letters is named by the domain the browser reads', async () => {
  await srv.ctx.config.setToolPermission('browser', 'browser_open_tab', 'ask');
  srv.ctx.catalog.rebuild();
  const url = 'https://g\u043e\u043egle.com/accounts';
  const call = fetch(`${srv.url}/tools/browser_open_tab/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { url } }) }).then((r) => r.status);
  for (let i = 0; i < 300 && srv.ctx.hub.confirmations.list().length === 0; i++) await Bun.sleep(20);
  const [waiting] = srv.ctx.hub.confirmations.list();
  expect(waiting?.tool).toBe('browser_open_tab');
  const r = await runCli(['approvals', '--port', String(srv.port)], { configDir: srv.configDir });
  expect(r.stdout).toContain(`xn--ggle-55da.com ${url}`);
  expect((await runCli(['deny', waiting!.id, '--port', String(srv.port)], { configDir: srv.configDir })).code).toBe(0);
  expect(await call).toBe(403);
});
