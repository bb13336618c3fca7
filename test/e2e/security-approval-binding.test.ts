/**
 * An approval is for the page the card showed. An agent asks to run something on a tab (here
 * browser_execute_script, which the user set to `ask`), then, while the user reads the card,
 * navigates that tab (browser_navigate_tab needs no approval) to another site. The card names the
 * tab's page, and once allowed the call runs only if the tab still shows that site; otherwise it
 * fails with tab_mismatch and never touches the other page. Performed with REST tool calls only;
 * the approval is given through /approvals, as the CLI does.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let tabId = 0;
/** The same fixture server under another origin: a different site to the browser. */
const otherSite = (path: string) => h.fixtureUrl(path).replace('://127.0.0.1:', '://localhost:');

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'ask' } } } });
  const r = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/index.html') });
  tabId = r.body.result.id;
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const decide = (id: string, decision: 'allow' | 'deny') =>
  fetch(`${h.url}/approvals/${id}`, { method: 'POST', headers: { ...h.srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ decision }) });

/** Start a script call and wait until it asks; returns the pending call and its card. */
async function askToRun(code: string) {
  const pending = h.callTool('browser_execute_script', { tabId, code });
  const card = await waitUntil(() => h.srv.ctx.hub.confirmations.list().find((c) => c.tool === 'browser_execute_script'), 'the call to ask');
  return { pending, card };
}

const title = async () => (await h.callTool('browser_get_tab_info', { tabId })).body.result.title as string;

describe('an approval is for the page the card showed', () => {
  test('the card names the page the tab shows', async () => {
    const { pending, card } = await askToRun('document.title');
    expect(card.target).toMatchObject({ tabId, url: h.fixtureUrl('/pages/index.html'), domain: '127.0.0.1' });
    const listed = await (await fetch(`${h.url}/approvals`, { headers: h.srv.auth })).json();
    expect(listed.approvals[0].target.url).toBe(h.fixtureUrl('/pages/index.html'));
    expect((await decide(card.id, 'allow')).status).toBe(200);
    const r: ToolCallResult = await pending;
    expect(r.status).toBe(200);
  });

  test('the tab moved to another site while the card waited: the allowed call does not run there', async () => {
    const { pending, card } = await askToRun('document.title = "ran by the agent"; location.href');
    expect(card.target?.url).toBe(h.fixtureUrl('/pages/index.html'));
    const nav = await h.callTool('browser_navigate_tab', { tabId, url: otherSite('/pages/second.html') });
    expect(nav.status).toBe(200);
    expect((await decide(card.id, 'allow')).status).toBe(200);
    const r: ToolCallResult = await pending;
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('tab_mismatch');
    expect(r.body.error.message).toContain('approved');
    expect(await title()).not.toBe('ran by the agent');
  });

  test('a tab that does not exist yet cannot be approved in advance', async () => {
    // Tab ids are handed out in order: the next ones are easy to guess.
    const ids = ((await h.callTool('browser_list_tabs')).body.result.tabs as { id: number }[]).map((t) => t.id);
    const next = Math.max(...ids) + 1;
    for (const id of [next, next + 1, next + 2]) {
      const ac = new AbortController();
      const call = h.callTool('browser_execute_script', { tabId: id, code: 'document.title = "ran by the agent"' }, { signal: ac.signal }).catch(() => null);
      const settled = await Promise.race([call, new Promise((r) => setTimeout(() => r('still waiting'), 3000))]);
      ac.abort();
      expect(h.srv.ctx.hub.confirmations.list()).toEqual([]);
      expect(settled).toMatchObject({ status: 409, body: { error: { code: 'tab_closed' } } });
    }
    // The tab that then opens under a guessed id got nothing.
    const opened = await h.callTool('browser_open_tab', { url: h.fixtureUrl('/pages/second.html') });
    expect(opened.body.result.id).toBeLessThanOrEqual(next + 2);
    expect((await h.callTool('browser_get_tab_info', { tabId: opened.body.result.id })).body.result.title).not.toBe('ran by the agent');
    await h.callTool('browser_close_tab', { tabId: opened.body.result.id });
  });

  test('another page of the same site is still the approved site', async () => {
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/index.html') });
    const { pending, card } = await askToRun('document.title = "ran as approved"; 1');
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/second.html') });
    expect((await decide(card.id, 'allow')).status).toBe(200);
    const r: ToolCallResult = await pending;
    expect(r.status).toBe(200);
    expect(await title()).toBe('ran as approved');
  });
});
