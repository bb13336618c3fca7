/**
 * The extension reloads (an update, or chrome.runtime.reload()) while a call runs on a tab. Real
 * Chromium with the real extension: the running call ends at once with extension_not_connected
 * saying the extension disconnected during the call and to retry once it reconnects (not a
 * timeout), and a call made before it is back says it is not connected, with the way to load it.
 * (Headless Chromium does not bring back a command-line-loaded extension after a reload, so its
 * reconnect is covered by the worker-stop and server-restart tests.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({});
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('a call running when the extension reloads ends at once, saying so', async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?reload-mid-call'));
  const tabId = await h.tabIdOf(page);
  const running = h.callTool('browser_wait_for', { tabId, text: 'text that never appears', timeoutMs: 25_000 });
  await Bun.sleep(1_000);
  await h.worker.evaluate(() => void setTimeout(() => chrome.runtime.reload(), 10)).catch(() => {});
  const r = await running;
  expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 503, code: 'extension_not_connected' });
  expect(r.body.error.message).toContain('disconnected while the call was running');
  expect(r.body.error.message).toContain('Retry once it reconnects');
  await h.waitForHealth((x) => x.extensionConnected === false, 'the extension to be gone');
  const next = await h.callTool('browser_list_tabs');
  expect(next.body.error?.code).toBe('extension_not_connected');
  expect(next.body.error.message).toContain('not connected');
}, 60_000);
