/**
 * browser_screenshot_tab shoots the window's visible tab, up to half a second after checking that
 * it is the agent's tab (captures are spaced for Chrome's rate limit). An agent can close and open
 * tabs meanwhile: if a page the tools may not use is in front exactly when the capture runs and its
 * own tab is back by the check after it, the image would be of the refused page. Made deterministic
 * here: the capture itself first shows the refused tab (as the agent's timing would), shoots, and
 * brings the agent's tab back. The image is dropped; the one returned is taken again with the
 * agent's tab in front. Same for the tab going to a refused page and back.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
const TAINTED = 'data:image/png;base64,VEFJTlRFRA==';

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
});
afterAll(async () => {
  await h?.stop();
});

/** In the worker: the next capture runs `during` (tab ids passed in) around a fake shot of the other page. */
async function armCapture(during: 'swap' | 'navigate', agentTab: number, otherTab: number, otherUrl: string): Promise<void> {
  const worker = await h.serviceWorker();
  await worker.evaluate(
    ({ during, agentTab, otherTab, otherUrl, tainted }) => {
      const tabs = chrome.tabs as unknown as { captureVisibleTab: (...a: unknown[]) => Promise<string> };
      const original = tabs.captureVisibleTab;
      const g = globalThis as unknown as { __captures: number };
      g.__captures = 0;
      tabs.captureVisibleTab = async (...a: unknown[]) => {
        g.__captures++;
        if (g.__captures > 1) return original.apply(chrome.tabs, a);
        if (during === 'swap') {
          await chrome.tabs.update(otherTab, { active: true });
          await chrome.tabs.update(agentTab, { active: true });
        } else {
          const back = (await chrome.tabs.get(agentTab)).url!;
          await chrome.tabs.update(agentTab, { url: otherUrl });
          await new Promise((r) => setTimeout(r, 300));
          await chrome.tabs.update(agentTab, { url: back });
          await new Promise((r) => setTimeout(r, 300));
        }
        return tainted;
      };
    },
    { during, agentTab, otherTab, otherUrl, tainted: TAINTED },
  );
}

const captures = async () => (await h.serviceWorker()).evaluate(() => (globalThis as unknown as { __captures: number }).__captures);

test('another tab shown while the capture runs: that image is dropped', async () => {
  const agent = await h.context.newPage();
  await agent.goto(h.fixtureUrl('/pages/index.html'));
  const agentTab = await h.tabIdOf(agent);
  // A page the tools may not use: the extension's own side panel, opened in a tab.
  const refused = await h.context.newPage();
  await refused.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
  const refusedTab = await (await h.serviceWorker()).evaluate(async () => (await chrome.tabs.query({})).find((t) => t.url?.endsWith('/sidepanel.html'))!.id!);
  await agent.bringToFront();
  await armCapture('swap', agentTab, refusedTab, '');
  const r = await h.callTool('browser_screenshot_tab', { tabId: agentTab });
  expect(await captures()).toBeGreaterThanOrEqual(2);
  if (r.status === 200) expect(r.body.images?.[0]?.data).not.toBe(TAINTED.slice(TAINTED.indexOf(',') + 1));
  expect(JSON.stringify(r.body)).not.toContain('VEFJTlRFRA');
  await refused.close();
  await agent.close();
});

test('the tab going to a refused page and back while the capture runs: that image is dropped', async () => {
  const agent = await h.context.newPage();
  await agent.goto(h.fixtureUrl('/pages/index.html'));
  const agentTab = await h.tabIdOf(agent);
  await agent.bringToFront();
  await armCapture('navigate', agentTab, 0, `chrome-extension://${h.extensionId}/sidepanel.html`);
  const r = await h.callTool('browser_screenshot_tab', { tabId: agentTab });
  expect(await captures()).toBeGreaterThanOrEqual(2);
  expect(JSON.stringify(r.body)).not.toContain('VEFJTlRFRA');
  await agent.close();
});
