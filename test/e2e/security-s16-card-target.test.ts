/**
 * The first lines of an approval card (the page URL and the domain) come from the agent's
 * arguments for some built-in tools (`url`, `domain`). They were shown as written: a U+202E
 * RIGHT-TO-LEFT OVERRIDE made the rest of a URL or a cookie domain read as another site, and a
 * URL of thousands of characters filled the card, pushing the arguments and the buttons out of
 * sight. These lines now show invisible and direction-changing characters as \uXXXX, like the
 * arguments, and are cut with a mark. Checked in the real side panel of the real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto', tools: { browser_set_cookie: 'ask' } } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('approval card target lines', () => {
  test('a URL and a domain with an override show it escaped, a long URL is cut, and the buttons stay in view', async () => {
    // Displayed with the override, each tail reads backwards: "https://www.bank.example/".
    const url = `https://evil.example/\u202e/elpmaxe.knab.www//:sptth?${'a'.repeat(6000)}`;
    const domain = `evil.example\u202e.elpmaxe.knab`;
    const call = h.callTool('browser_set_cookie', { url, name: 'session', value: 'x', domain });
    await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
    const panel = await h.openSidePanel();
    const card = panel.locator('[data-testid="confirm-browser_set_cookie"]');
    await card.waitFor({ timeout: 15_000 });
    const shownUrl = (await card.locator('[data-testid="approval-url"]').textContent()) ?? '';
    const shownDomain = (await card.locator('[data-testid="approval-domain"]').textContent()) ?? '';
    for (const shown of [shownUrl, shownDomain]) {
      expect(shown).not.toContain('\u202e');
      expect(shown).toContain('\\u202e');
    }
    expect(shownUrl.startsWith('https://evil.example/')).toBe(true);
    expect(shownUrl.length).toBeLessThan(400);
    expect(shownUrl).toMatch(/more characters$/);
    expect(await card.locator('[data-testid="approval-url"]').getAttribute('title')).toBeNull();
    // Deny is on screen in the panel as it opened, without scrolling past the URL.
    const viewport = await panel.evaluate(() => window.innerHeight);
    const deny = card.locator('[data-testid="deny"]');
    const box = await deny.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(viewport);
    await waitUntil(() => deny.isEnabled(), 'the card to arm');
    await deny.click();
    const r = await call;
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_denied');
  });
});
