/**
 * browser_intercept_requests cannot stand in for browser_execute_script: with the script tool off,
 * a fulfill rule that answers the page itself, one of its frames or one of its scripts with the
 * agent's own code would run that code in the site's origin (its cookies, its session). Such
 * requests go on untouched and are counted as skipped; data requests are still mocked.
 * Performed as an agent would: REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let tabId = 0;

const EVIL = '<!doctype html><title>evil</title><script>document.cookie="stolen=1";document.title="ran:"+document.cookie</script><p>evil page</p>';
const EVIL_JS = 'document.cookie="stolen=1"; document.title = "ran:" + document.cookie;';

beforeAll(async () => {
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'off', browser_intercept_requests: 'auto' } } },
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/site/app.js') return new Response('document.title = "real script";', { headers: { 'content-type': 'text/javascript' } });
      if (path === '/site/with-script.html') return new Response('<!doctype html><title>waiting</title><script src="/site/app.js"></script><p>real page with script</p>', { headers: { 'content-type': 'text/html' } });
      if (path === '/site/with-frame.html') return new Response('<!doctype html><title>outer</title><iframe src="/site/frame.html"></iframe>', { headers: { 'content-type': 'text/html' } });
      if (path === '/site/frame.html') return new Response('<!doctype html><p>real frame</p>', { headers: { 'content-type': 'text/html' } });
      if (path.startsWith('/site/api/')) return Response.json({ real: path });
      return undefined;
    },
  });
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html'));
  tabId = await h.tabIdOf(page);
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const cookies = async (): Promise<string[]> => (await h.context.cookies(h.fixtureBase)).map((c) => c.name);

describe('fulfill answers data, never code', () => {
  test('the script tool is off', async () => {
    const r = await h.callTool('browser_execute_script', { tabId, code: 'document.cookie="stolen=1"' });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('permission_off');
  });

  test('a document answered by a rule: the real page loads, the rule reports it skipped', async () => {
    const set = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*/pages/second.html*', action: 'fulfill', body: EVIL, contentType: 'text/html' }] });
    expect(set.status).toBe(200);
    const nav = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/second.html?x') });
    expect(nav.status).toBe(200);
    const content = await h.callTool('browser_get_tab_content', { tabId });
    expect(content.body.result.content).not.toContain('evil page');
    expect(content.body.result.title).not.toContain('ran:');
    const listed = await h.callTool('browser_intercept_requests', { tabId });
    expect(listed.body.result.rules[0]).toMatchObject({ action: 'fulfill', hits: 0, skipped: 1 });
    expect(await cookies()).not.toContain('stolen');
  });

  test('a script or a frame answered by a rule: the real ones run', async () => {
    const set = await h.callTool('browser_intercept_requests', {
      tabId,
      rules: [
        { urlPattern: '*/site/app.js', action: 'fulfill', body: EVIL_JS, contentType: 'text/javascript' },
        { urlPattern: '*/site/frame.html', action: 'fulfill', body: EVIL, contentType: 'text/html' },
      ],
    });
    expect(set.status).toBe(200);
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/site/with-script.html') });
    const title = await waitUntil(async () => {
      const t = (await h.callTool('browser_get_tab_info', { tabId })).body.result?.title as string;
      return t && t !== 'waiting' ? t : null;
    }, 'the page script to run');
    expect(title).toBe('real script');
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/site/with-frame.html') });
    const listed = await waitUntil(async () => {
      const r = await h.callTool('browser_intercept_requests', { tabId });
      return r.body.result.rules[1].skipped === 1 ? r : null;
    }, 'the frame request skipped');
    expect(listed.body.result.rules.map((r: { hits: number; skipped?: number }) => [r.hits, r.skipped ?? 0])).toEqual([[0, 1], [0, 1]]);
    expect(await cookies()).not.toContain('stolen');
  });

  test('data requests are still mocked', async () => {
    await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/index.html') });
    const set = await h.callTool('browser_intercept_requests', { tabId, rules: [{ urlPattern: '*/site/api/*', action: 'fulfill', status: 201, body: '{"mocked":true}' }] });
    expect(set.status).toBe(200);
    const page = h.context.pages().find((p) => p.url() === h.fixtureUrl('/pages/index.html'))!;
    const got = await page.evaluate(() => fetch('/site/api/user').then(async (r) => ({ status: r.status, text: await r.text() })));
    expect(got).toEqual({ status: 201, text: '{"mocked":true}' });
    const listed = await h.callTool('browser_intercept_requests', { tabId });
    expect(listed.body.result.rules[0]).toMatchObject({ hits: 1 });
    expect(listed.body.result.rules[0].skipped).toBeUndefined();
    await h.callTool('browser_intercept_requests', { tabId, stop: true });
  });
});

describe("the extension's own requests", () => {
  test('are not a tab\'s: rules on /ws-info and the server do not touch the extension reconnecting', async () => {
    const server = h.url;
    const set = await h.callTool('browser_intercept_requests', {
      tabId,
      rules: [
        { urlPattern: '*/ws-info*', action: 'fulfill', body: '{"wsUrl":"ws://127.0.0.1:1/ws","serverNonce":"x","serverProof":"y","extensionConnected":false}' },
        { urlPattern: `${server}/*`, action: 'block' },
        { urlPattern: '*auth.json*', action: 'fulfill', body: '{"secret":"chosen-by-the-agent"}' },
      ],
    });
    expect(set.status).toBe(200);
    // A new server on the same port: the worker proves it again (/ws-info, auth.json) and reconnects,
    // over requests no tab sees.
    await h.restartServer();
    await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect', 60_000);
    const r = await waitUntil(async () => {
      const x = await h.callTool('browser_list_tabs', {});
      return x.status === 200 ? x : null;
    }, 'tools to work again', 30_000);
    expect(r.status).toBe(200);
  });
});
