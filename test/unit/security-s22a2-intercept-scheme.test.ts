/**
 * browser_intercept_requests acts on http(s) requests only (server/protocol/intercept-scheme.ts):
 * which patterns name another scheme, and that the server (before anyone is asked) and the
 * extension's handler (for a server that does not check) both refuse them. What Chromium does with
 * paused requests of other schemes is checked in test/e2e/security-s22a2-intercept-schemes.test.ts.
 * Also: the extension refuses a middle click itself, for a server whose schema still offers the
 * middle button (the schema offers left and right only; test/unit/catalog.test.ts).
 */
import { describe, expect, test } from 'bun:test';
import { interceptPatternError, isHttpUrl, nonHttpScheme } from '../../server/protocol/intercept-scheme.ts';
import { TOOL_HANDLERS } from '../../extension/tools/index.ts';
import type { ToolCtx } from '../../extension/tools/types.ts';

describe('the scheme a pattern names', () => {
  test('http(s) or a wildcard that can mean them: accepted', () => {
    for (const p of ['*', '*://*/api/ads*', 'http://127.0.0.1:8080/*', 'https://*', 'HTTPS://x/*', 'http*', 'h*', 'https*://x/*', '?ttps://*', 'http?://*', '*?next=file://*', '*.png', '*example.com:8080/*', '**']) {
      expect([p, nonHttpScheme(p)]).toEqual([p, null]);
    }
  });

  test('another scheme, written or as the only thing a wildcard can mean: refused, named', () => {
    const cases: [string, string][] = [
      ['chrome-extension://*', 'chrome-extension'],
      ['chrome-extension://abcdefghijklmnopabcdefghijklmnop/auth.json', 'chrome-extension'],
      ['file:///*', 'file'],
      ['FILE:///etc/*', 'FILE'],
      ['data:*', 'data'],
      ['blob:*', 'blob'],
      ['blob:http://127.0.0.1/*', 'blob'],
      ['filesystem:*', 'filesystem'],
      ['chrome-extension*', 'chrome-extension'],
      ['*chrome-extension://*', '*chrome-extension'],
      ['*-extension://*', '*-extension'],
      ['?ile://*', '?ile'],
      ['ws://*', 'ws'],
      ['httpx://*', 'httpx'],
    ];
    for (const [p, scheme] of cases) expect([p, nonHttpScheme(p)]).toEqual([p, scheme]);
    expect(interceptPatternError('chrome-extension://*', 2)).toContain('rules[2].urlPattern "chrome-extension://*" is for "chrome-extension" URLs: only http and https requests');
  });

  test('isHttpUrl', () => {
    expect(['http://a/', 'https://a/b', 'HTTP://A/'].map(isHttpUrl)).toEqual([true, true, true]);
    expect(['chrome-extension://x/y', 'file:///tmp/a', 'data:text/plain,x', 'blob:http://a/1', 'httpx://a', 'http:/a'].map(isHttpUrl)).toEqual([false, false, false, false, false, false]);
  });
});

/** A handler context whose tab is an ordinary page; nothing else of the browser is there to reach. */
function ctx(): ToolCtx {
  return { tab: async (id: unknown) => ({ id: id as number, url: 'http://127.0.0.1:9/page.html' }) as chrome.tabs.Tab, signal: new AbortController().signal, progress() {} } as unknown as ToolCtx;
}

test('the extension refuses such a pattern itself, before touching the tab (a server that does not check)', async () => {
  const call = TOOL_HANDLERS.browser_intercept_requests({ tabId: 7, rules: [{ urlPattern: '*/api/*', action: 'block' }, { urlPattern: 'chrome-extension://*', action: 'fulfill', body: '{}' }] }, ctx());
  await expect(call).rejects.toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('rules[1].urlPattern "chrome-extension://*" is for "chrome-extension" URLs') });
});

test('the extension refuses a middle click itself (a server whose schema still offers it)', async () => {
  const noTab = { ...ctx(), tab: async () => { throw new Error('the tab was reached'); } } as unknown as ToolCtx;
  const args = { tabId: 7, button: 'middle' } as unknown as { tabId: number };
  await expect(TOOL_HANDLERS.browser_click_element({ ...args, selector: '#t' }, noTab)).rejects.toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('middle button is refused') });
  await expect(TOOL_HANDLERS.browser_click_at({ ...args, x: 1, y: 1 }, noTab)).rejects.toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('middle button is refused') });
});
