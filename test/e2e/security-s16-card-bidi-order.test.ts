/**
 * The approval card writes direction-changing control characters as \uXXXX, but letters of
 * right-to-left scripts reorder what is next to them without any control character: after a
 * Hebrew letter, "1111 2222" was drawn as "2222 1111", so an account number, an amount or a path
 * on the card read differently from what the call sends. The card's arguments and target lines
 * are now drawn in the order the characters are in (left to right, whatever their script).
 * Checked in the real side panel of the real extension by where each character is drawn.
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

describe('approval card text order', () => {
  test('numbers and path parts after right-to-left letters are drawn in the order they are sent', async () => {
    const call = h.callTool('browser_set_cookie', { url: 'https://bank.example/\u05d0 3333 4444', name: 'iban', value: '\u05d0 1111 2222' });
    await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to ask');
    const panel = await h.openSidePanel();
    const card = panel.locator('[data-testid="confirm-browser_set_cookie"]');
    await card.waitFor({ timeout: 15_000 });
    // Left edge of the first `first` and of the first `second` after it.
    const order = async (testid: string, first: string, second: string) =>
      card.locator(`[data-testid="${testid}"]`).evaluate((el, [first, second]) => {
        const node = el.firstChild as Text;
        const text = node.data;
        const at = (needle: string, from: number) => {
          const i = text.indexOf(needle, from);
          const r = document.createRange();
          r.setStart(node, i);
          r.setEnd(node, i + needle.length);
          return { i, x: r.getBoundingClientRect().left, y: r.getBoundingClientRect().top };
        };
        const a = at(first!, 0);
        const b = at(second!, a.i);
        return { sameLine: Math.abs(a.y - b.y) < 2, firstLeft: a.x < b.x };
      }, [first, second]);
    expect(await order('approval-args', '1111', '2222')).toEqual({ sameLine: true, firstLeft: true });
    expect(await order('approval-args', '3333', '4444')).toEqual({ sameLine: true, firstLeft: true });
    expect(await order('approval-url', '3333', '4444')).toEqual({ sameLine: true, firstLeft: true });
    const deny = card.locator('[data-testid="deny"]');
    await waitUntil(() => deny.isEnabled(), 'the card to arm');
    await deny.click();
    expect((await call).status).toBe(403);
  });
});
