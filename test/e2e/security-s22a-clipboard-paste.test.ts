/**
 * The user's clipboard often holds a password or a token copied from another program. A key press
 * sent through the debugger is trusted: Control+V (Meta+V on macOS) runs Chrome's paste command
 * whatever the page's clipboard permissions, and the page's paste listener reads what was copied,
 * even with no field focused. On Linux a middle click pastes the primary selection (the text
 * selected last anywhere) the same way. A page that injected the agent would ask it for exactly
 * that. browser_press_key refuses Control/Meta+V, and the click tools refuse the middle button.
 * Performed as an agent would (REST tool calls); Playwright writes the user's clipboard and reads
 * what the page got.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(180_000);

let h: BrowserHarness;
const COPIED = 'hunter2-copied-from-the-password-manager';

/** The agent's page: a field and a note of every paste event and what it carried. */
const AGENT_PAGE = `<!doctype html><title>notes</title><p id="p">Some words</p><textarea id="t" aria-label="Notes"></textarea><script>
window.pasted = [];
document.addEventListener('paste', (e) => { window.pasted.push(e.clipboardData ? e.clipboardData.getData('text/plain') : ''); }, true);
</script>`;

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => (new URL(req.url).pathname === '/s22a-notes.html' ? new Response(AGENT_PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : undefined),
  });
  // The user copies a password: written with the clipboard permission, which the page then loses.
  const origin = new URL(h.fixtureBase).origin;
  await h.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const user = await h.context.newPage();
  await user.goto(h.fixtureUrl('/pages/index.html'));
  await user.evaluate((text) => navigator.clipboard.writeText(text), COPIED);
  await h.context.clearPermissions();
  await user.close();
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

async function notes(): Promise<{ page: Page; tabId: number; got: () => Promise<{ value: string; pasted: string[] }> }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/s22a-notes.html'));
  await page.bringToFront();
  const got = () => page.evaluate(() => ({ value: (document.getElementById('t') as HTMLTextAreaElement).value, pasted: (window as unknown as { pasted: string[] }).pasted }));
  return { page, tabId: await h.tabIdOf(page), got };
}

describe('the clipboard through trusted input', () => {
  test('Control+V and Meta+V are refused, in a field or not, and the page gets no paste', async () => {
    const { page, tabId, got } = await notes();
    const tries: Record<string, unknown>[] = [
      { selector: '#t', key: 'v', modifiers: ['Control'] },
      { selector: '#t', key: 'V', modifiers: ['Control', 'Shift'] },
      { selector: '#t', key: 'v', modifiers: ['Meta'] },
      { selector: '#t', key: 'v', modifiers: ['Control', 'Alt'] },
      { key: 'v', modifiers: ['Control'] },
    ];
    for (const args of tries) {
      const r = await h.callTool('browser_press_key', { tabId, ...args });
      expect([r.status, r.body.error?.code, JSON.stringify(args)]).toEqual([400, 'invalid_arguments', JSON.stringify(args)]);
      expect(r.body.error.message).toContain('clipboard');
    }
    expect(await got()).toEqual({ value: '', pasted: [] });
    // Keys that do not paste still work: a plain v is typed, Control+A selects.
    expect((await h.callTool('browser_press_key', { tabId, selector: '#t', key: 'v' })).status).toBe(200);
    expect((await h.callTool('browser_press_key', { tabId, selector: '#t', key: 'a', modifiers: ['Control'] })).status).toBe(200);
    expect(await got()).toEqual({ value: 'v', pasted: [] });
    await page.close();
  });

  test('a middle click is refused by browser_click_element and browser_click_at; the page gets no paste', async () => {
    const { page, tabId, got } = await notes();
    const element = await h.callTool('browser_click_element', { tabId, selector: '#t', button: 'middle' });
    expect([element.status, element.body.error?.code]).toEqual([400, 'invalid_arguments']);
    // The schema offers left and right only: the server refuses it, naming them (the extension refuses it too).
    expect(element.body.error.message).toContain('at /button: must be one of "left", "right"');
    const box = (await page.locator('#t').boundingBox())!;
    const at = await h.callTool('browser_click_at', { tabId, x: Math.round(box.x + 5), y: Math.round(box.y + 5), button: 'middle' });
    expect([at.status, at.body.error?.code]).toEqual([400, 'invalid_arguments']);
    expect(at.body.error.message).toContain('at /button: must be one of "left", "right"');
    expect(await got()).toEqual({ value: '', pasted: [] });
    // Left and right clicks still work.
    expect((await h.callTool('browser_click_element', { tabId, selector: '#t' })).status).toBe(200);
    expect((await h.callTool('browser_click_element', { tabId, selector: '#p', button: 'right' })).status).toBe(200);
    expect(await got()).toEqual({ value: '', pasted: [] });
    await page.close();
  });

  test('the user\'s clipboard still holds what they copied (it was there to be pasted)', async () => {
    const origin = new URL(h.fixtureBase).origin;
    await h.context.grantPermissions(['clipboard-read'], { origin });
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html?read'));
    await page.bringToFront();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(COPIED);
    await h.context.clearPermissions();
    await page.close();
  });
});
