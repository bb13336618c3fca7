/**
 * The reading tools and iframes, in Chromium with the real extension: browser_get_tab_content
 * reads the text of a same-origin, a cross-origin (own process), a srcdoc and an about:blank
 * iframe where each iframe is in the page's text (a page cannot fake an iframe's place), within
 * maxLength; an iframe the URL policy refuses is named, never
 * scripted; a busy frame does not hold the call; a page without iframes does not look for frames;
 * browser_wait_for / browser_wait_for_element see a text in an iframe (also one loaded during the
 * wait) and wait for it to go from there; a selector stays with the top page and says so;
 * browser_query_elements and browser_get_page_html say the page's iframes are not included.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { navigateOnFirstUse, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

const INNER = '<!doctype html><title>Inner</title><body><p>Inner text</p><p id="late"></p></body>';
const CROSS = '<!doctype html><title>Cross</title><body><p>Cross text</p></body>';
const ELSEWHERE_MARK = 'only-on-the-other-site';

let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
let page: Page;
let tabId = 0;

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html' } });

beforeAll(async () => {
  other = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/cross.html') return new Response(CROSS, { headers: { 'content-type': 'text/html', 'origin-agent-cluster': '?1' } });
      if (path === '/elsewhere.html') return html(`<!doctype html><title>Elsewhere</title><iframe title="Theirs" srcdoc="<p>${ELSEWHERE_MARK}</p>"></iframe>`);
      return new Response('not found', { status: 404 });
    },
  });
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/inner.html') return html(INNER);
      if (path === '/shadow.html') {
        return html(`<!doctype html><title>Shadow</title><p>Host page</p><div id="host"></div>
<script>document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<iframe title="In shadow" srcdoc="<p>Shadow frame text</p>"></iframe>';</script>`);
      }
      if (path === '/shadows.html') {
        // Two iframes in a shadow root (the second made first: the browser's order of the frames
        // is not the page's), then a plain one.
        return html(`<!doctype html><title>Shadows</title><p>Host page</p><div id="host"></div><iframe title="Plain" srcdoc="<p>Plain text</p>"></iframe>
<script>
const root = document.getElementById('host').attachShadow({ mode: 'open' });
root.innerHTML = '<iframe title="Second" srcdoc="<p>Second text</p>"></iframe>';
const first = document.createElement('iframe');
first.title = 'First';
first.srcdoc = '<p>First text</p>';
root.prepend(first);
</script>`);
      }
      if (path === '/checkout.html') {
        return html(`<!doctype html><title>Checkout</title><body><h1>Checkout</h1><p>Your cart: 2 items</p>
<section><h2>Payment</h2><iframe title="Card" srcdoc="<p>Card number field</p><iframe title='Nested' srcdoc='<p>Nested text</p>'></iframe><p>Card footer</p>"></iframe><p>Total: 20 EUR</p></section>
<div style="display:none"><iframe title="Hidden" srcdoc="<p>Hidden frame text</p>"></iframe></div>
<article><h2>Article</h2><p>Article body</p></article>
<iframe title="Comments" srcdoc="<p>First comment</p>"></iframe>
<footer>Page footer</footer></body>`);
      }
      if (path === '/forge.html') {
        // Whatever text nodes appear in the page are copied into it, as text, once they are gone.
        return html(`<!doctype html><title>Forge</title><body><p>Before</p><iframe title="Framed" srcdoc="<p>Framed text</p>"></iframe><p id="seen"></p><p>After</p>
<script>
const seen = [];
new MutationObserver((records) => {
  const before = seen.length;
  for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 3 && n.parentNode === null) seen.push(n.data);
  if (seen.length > before) document.getElementById('seen').textContent = 'Seen: ' + seen.join(' ');
}).observe(document.body, { childList: true, subtree: true });
</script></body>`);
      }
      if (path === '/plain-page.html') return html('<!doctype html><title>Plain</title><p>Nothing framed here</p>');
      if (path === '/outer.html') {
        return html(`<!doctype html><title>Outer</title><body><h1>Outer page</h1>
<iframe title="Same" src="/inner.html"></iframe>
<iframe title="Other" src="http://127.0.0.1:${other.port}/cross.html"></iframe>
<iframe title="Written" srcdoc="<p>Srcdoc text</p>"></iframe>
<iframe title="Blank" id="blank"></iframe>
<script>document.getElementById('blank').contentDocument.body.innerHTML = '<p>Blank text</p>';</script>
<p>After frames</p></body>`);
      }
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/outer.html'));
  tabId = await h.tabIdOf(page);
  await waitUntil(() => page.frames().length === 5 && page.frames().every((f) => f.url() !== ''), 'the frames to load');
}, 60_000);

afterAll(async () => {
  await h?.stop();
  other?.stop(true);
});

function frameOf(p: Page, url: string): Frame {
  const f = p.frames().find((x) => x.url().includes(url));
  if (!f) throw new Error(`no frame ${url}`);
  return f;
}

async function content(args: Record<string, unknown> = {}, id = tabId) {
  const r = await h.callTool('browser_get_tab_content', { tabId: id, ...args });
  expect(r.status).toBe(200);
  return r.body.result as { content: string; length: number; truncated: boolean; frames?: { url: string; name?: string; read: boolean; note?: string }[]; iframes?: string };
}

test('browser_get_tab_content reads each iframe\'s text where the iframe is in the page\'s text, under its [iframe …] line', async () => {
  const r = await content();
  const crossUrl = `http://127.0.0.1:${other.port}/cross.html`;
  expect(r.content).toStartWith('Outer page');
  expect(r.content).toContain(`\n\n[iframe Same (${h.fixtureUrl('/inner.html')})]\nInner text`);
  expect(r.content).toContain(`\n\n[iframe Other (${crossUrl})]\nCross text`);
  expect(r.content).toContain('\n\n[iframe Written (about:srcdoc)]\nSrcdoc text');
  expect(r.content).toContain('\n\n[iframe Blank (about:blank)]\nBlank text');
  expect(r.content).toEndWith('\n\n[iframe Blank (about:blank)]\nBlank text\n\nAfter frames');
  const at = ['Outer page', 'Inner text', 'Cross text', 'Srcdoc text', 'Blank text', 'After frames'].map((t) => r.content.indexOf(t));
  expect(at).toEqual([...at].sort((a, b) => a - b));
  expect(r.frames!.map((f) => [f.name, f.read])).toEqual([['Same', true], ['Other', true], ['Written', true], ['Blank', true]]);
  expect(r).toMatchObject({ truncated: false, length: r.content.length });
});

test('browser_get_tab_content keeps to maxLength across frames and says it truncated', async () => {
  const all = await content();
  const maxLength = all.content.indexOf('Cross text') + 3;
  const r = await content({ maxLength });
  expect(r.content).toBe(all.content.slice(0, maxLength));
  expect(r).toMatchObject({ truncated: true, length: all.length });
  // The page's own text alone over maxLength: no frame text at all.
  const short = await content({ maxLength: 5 });
  expect(short).toMatchObject({ content: 'Outer', truncated: true, length: all.length });
});

test('an iframe inside a web component\'s shadow root is read too', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/shadow.html'));
  await waitUntil(() => p.frames().length === 2, 'the frame to load');
  const r = await content({}, await h.tabIdOf(p));
  expect(r.content).toBe('Host page\n\n[iframe In shadow (about:srcdoc)]\nShadow frame text');
  await p.close();
});

test('an iframe\'s text is where the iframe is: in the middle of the page, inside a frame, at the end; a hidden one\'s last', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/checkout.html'));
  await waitUntil(() => p.frames().length === 5, 'the frames to load');
  const id = await h.tabIdOf(p);
  const r = await content({}, id);
  expect(r.content).toBe([
    'Checkout\n\nYour cart: 2 items\n\nPayment',
    '[iframe Card (about:srcdoc)]\nCard number field',
    '  [iframe Nested (about:srcdoc)]\nNested text',
    'Card footer',
    'Total: 20 EUR\n\nArticle\n\nArticle body',
    '[iframe Comments (about:srcdoc)]\nFirst comment',
    'Page footer',
    '[iframe Hidden (about:srcdoc)]\nHidden frame text',
  ].join('\n\n'));
  expect(r).toMatchObject({ truncated: false, length: r.content.length });
  expect(r.frames!.map((f) => f.name)).toEqual(['Card', 'Nested', 'Hidden', 'Comments']);
  // Cut anywhere, the text is the start of the whole one, and the length is the whole one's.
  for (const cut of ['Nested text', 'Total', 'First comment', 'Page footer'].map((t) => r.content.indexOf(t) + 2)) {
    const part = await content({ maxLength: cut }, id);
    expect(part).toMatchObject({ content: r.content.slice(0, cut), truncated: true, length: r.length });
  }
  // The page's text did not keep anything the read put there.
  expect(await p.evaluate(() => document.body.innerText)).not.toContain('\u0001');
  await p.close();
});

test('a page that saw where the last read put its iframes cannot fake an iframe\'s place', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/forge.html'));
  await waitUntil(() => p.frames().length === 2, 'the frame to load');
  const id = await h.tabIdOf(p);
  const first = await content({}, id);
  expect(first.content).toBe('Before\n\n[iframe Framed (about:srcdoc)]\nFramed text\n\nAfter');
  // The page now holds in its own text what the first read put before its iframe.
  await waitUntil(() => p.evaluate(() => document.getElementById('seen')!.textContent !== ''), 'the page to copy it');
  const copied = await p.evaluate(() => document.getElementById('seen')!.textContent!.slice('Seen: '.length));
  expect(copied).toContain('\u0001');
  const second = await content({}, id);
  expect(second.content).toBe(`Before\n\n[iframe Framed (about:srcdoc)]\nFramed text\n\nSeen: ${copied}\n\nAfter`);
  await p.close();
});

test('iframes inside a shadow root are each read under their own line, and so is a plain one after them', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/shadows.html'));
  await waitUntil(() => p.frames().length === 4, 'the frames to load');
  const r = await content({}, await h.tabIdOf(p));
  expect(r.content).toBe('Host page\n\n[iframe First (about:srcdoc)]\nFirst text\n\n[iframe Second (about:srcdoc)]\nSecond text\n\n[iframe Plain (about:srcdoc)]\nPlain text');
  await p.close();
});

test('with a selector the frames are said, not read', async () => {
  const r = await content({ selector: 'body' });
  expect(r.content).not.toContain('Inner text');
  expect(r.iframes).toContain('4 iframes in what was read');
  expect(r.frames).toBeUndefined();
  const h1 = await content({ selector: 'h1' });
  expect(h1.iframes).toBeUndefined();
});

test('an iframe the URL policy refuses is named but never scripted', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/inner.html'));
  const id = await h.tabIdOf(p);
  await p.evaluate((src) => {
    for (const [title, url] of [['Extension', src], ['Data', 'data:text/html,<p>Data text</p>']]) {
      const f = document.createElement('iframe');
      f.title = title!;
      f.src = url!;
      document.body.append(f);
    }
  }, `chrome-extension://${h.extensionId}/sidepanel.html`);
  await waitUntil(() => p.frames().length === 3, 'the iframes to exist');
  await new Promise((r) => setTimeout(r, 500));
  // Every script target the worker uses during the call is recorded.
  const sw = await h.serviceWorker();
  const dataDocument = await sw.evaluate(async (t) => {
    const g = globalThis as unknown as { __targets: unknown[]; __original?: typeof chrome.scripting.executeScript };
    g.__targets = [];
    g.__original ??= chrome.scripting.executeScript;
    const original = g.__original as unknown as (i: unknown) => unknown;
    (chrome.scripting as { executeScript: unknown }).executeScript = (inj: { target: unknown }) => {
      g.__targets.push(inj.target);
      return original.call(chrome.scripting, inj);
    };
    return (await chrome.webNavigation.getAllFrames({ tabId: t }))!.find((f) => f.url.startsWith('data:'))!.documentId;
  }, id);
  try {
    const r = await content({}, id);
    expect(r.content).toContain('Inner text');
    expect(r.content).not.toContain('Data text');
    expect(r.content).toMatch(/\[iframe Data \(data:\): not read \(tools may not read it: data: documents are not allowed\)\]/);
    expect(r.content).toMatch(/\[iframe Extension \((chrome-extension|chrome-error):\/\/[^)]*\): not read \(tools may not read it: [^)]+\)\]/);
    expect(r.frames!.map((f) => f.read)).toEqual([false, false]);
    const targets = await sw.evaluate(() => (globalThis as unknown as { __targets: { documentIds?: string[] }[] }).__targets);
    expect(targets.length).toBeGreaterThan(0);
    for (const t of targets) expect(t.documentIds).toBeDefined();
    expect(targets.flatMap((t) => t.documentIds ?? [])).not.toContain(dataDocument);
  } finally {
    await sw.evaluate(() => {
      const g = globalThis as unknown as { __original?: typeof chrome.scripting.executeScript };
      if (g.__original) (chrome.scripting as { executeScript: unknown }).executeScript = g.__original;
    });
    await p.close();
  }
});

test('a page without iframes is read with no look for frames', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/plain-page.html'));
  const id = await h.tabIdOf(p);
  const sw = await h.serviceWorker();
  await sw.evaluate(() => {
    const g = globalThis as unknown as { __frameLooks: number; __originalGetAll?: typeof chrome.webNavigation.getAllFrames };
    g.__frameLooks = 0;
    g.__originalGetAll ??= chrome.webNavigation.getAllFrames;
    const original = g.__originalGetAll as unknown as (d: unknown) => unknown;
    (chrome.webNavigation as { getAllFrames: unknown }).getAllFrames = (d: unknown) => {
      g.__frameLooks++;
      return original.call(chrome.webNavigation, d);
    };
  });
  try {
    const r = await content({}, id);
    expect(r).toEqual({ url: h.fixtureUrl('/plain-page.html'), title: 'Plain', content: 'Nothing framed here', length: 19, truncated: false } as never);
    expect(await sw.evaluate(() => (globalThis as unknown as { __frameLooks: number }).__frameLooks)).toBe(0);
  } finally {
    await sw.evaluate(() => {
      const g = globalThis as unknown as { __originalGetAll?: typeof chrome.webNavigation.getAllFrames };
      if (g.__originalGetAll) (chrome.webNavigation as { getAllFrames: unknown }).getAllFrames = g.__originalGetAll;
    });
    await p.close();
  }
});

test('a frame whose own process is busy does not hold browser_get_tab_content up: its line says so', async () => {
  const cross = frameOf(page, '/cross.html');
  void cross.evaluate(() => setTimeout(() => { const t = Date.now(); while (Date.now() - t < 9000) {} }, 50)).catch(() => {});
  await new Promise((r) => setTimeout(r, 300));
  const r = await content();
  expect(r.content).toContain(`[iframe Other (http://127.0.0.1:${other.port}/cross.html): not read (it did not answer: not loaded yet, or its page is busy)]`);
  expect(r.content).not.toContain('Cross text');
  expect(r.content).toContain('Inner text');
  await waitUntil(() => cross.evaluate(() => true), 'the frame to be free again', 20_000);
});

test('browser_wait_for text sees a text appearing in a same-origin, a cross-origin and a newly added iframe', async () => {
  const inner = frameOf(page, '/inner.html');
  const cross = frameOf(page, '/cross.html');
  const cases: [string, () => Promise<unknown>][] = [
    ['Late inner text', () => inner.evaluate(() => setTimeout(() => { document.getElementById('late')!.textContent = 'Late inner text'; }, 400))],
    ['Late cross text', () => cross.evaluate(() => setTimeout(() => { document.body.insertAdjacentHTML('beforeend', '<p>Late cross text</p>'); }, 400))],
    ['Text of an added frame', () => page.evaluate(() => setTimeout(() => {
      const f = document.createElement('iframe');
      f.srcdoc = '<p>Text of an added frame</p>';
      document.body.append(f);
    }, 600))],
  ];
  for (const [text, make] of cases) {
    await make();
    const r = await h.callTool('browser_wait_for', { tabId, text, timeoutMs: 8_000 });
    expect({ text, status: r.status, result: r.body.result }).toEqual({ text, status: 200, result: expect.objectContaining({ waited: 'text' }) });
  }
  const el = await h.callTool('browser_wait_for_element', { tabId, text: 'Cross text', timeoutMs: 3_000 });
  expect(el.status).toBe(200);
  expect(el.body.result).toMatchObject({ found: true, state: 'visible' });
});

test('browser_wait_for textGone waits until the text is gone from the iframes too', async () => {
  const inner = frameOf(page, '/inner.html');
  await inner.evaluate(() => { document.getElementById('late')!.textContent = 'Going text'; });
  // Still there: a timeout, not "gone".
  const still = await h.callTool('browser_wait_for', { tabId, textGone: 'Going text', timeoutMs: 800 });
  expect({ status: still.status, code: still.body.error?.code }).toEqual({ status: still.status, code: 'timeout' });
  await inner.evaluate(() => setTimeout(() => { document.getElementById('late')!.textContent = ''; }, 400));
  const gone = await h.callTool('browser_wait_for', { tabId, textGone: 'Going text', timeoutMs: 8_000 });
  expect(gone.status).toBe(200);
  expect(await inner.evaluate(() => document.getElementById('late')!.textContent)).toBe('');
});

test('a text wait is not held up by a busy iframe: textGone gives up after its timeout and names the iframes', async () => {
  const cross = frameOf(page, '/cross.html');
  void cross.evaluate(() => setTimeout(() => { const t = Date.now(); while (Date.now() - t < 9000) {} }, 50)).catch(() => {});
  await new Promise((r) => setTimeout(r, 300));
  const r = await h.callTool('browser_wait_for', { tabId, textGone: 'Cross text', timeoutMs: 500 });
  expect(r.body.error?.code).toBe('timeout');
  expect(r.body.error.message).toContain('or one of its iframes did not answer');
  // While that frame is still busy, a text appearing in the top page is found.
  await page.evaluate(() => setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>Top late text</p>'), 200));
  const found = await h.callTool('browser_wait_for', { tabId, text: 'Top late text', timeoutMs: 8_000 });
  expect(found.status).toBe(200);
  await waitUntil(() => cross.evaluate(() => true), 'the frame to be free again', 20_000);
});

test('a selector wait stays with the top page and says so when it times out', async () => {
  const r = await h.callTool('browser_wait_for_element', { tabId, selector: '#late', state: 'attached', timeoutMs: 500 });
  expect(r.body.error?.code).toBe('timeout');
  expect(r.body.error.message).toContain('a selector is looked up in the top document only, not inside the page\'s iframes');
});

test('browser_query_elements and browser_get_page_html say the iframes\' content is not included', async () => {
  const q = await h.callTool('browser_query_elements', { tabId, selector: 'p' });
  expect(q.status).toBe(200);
  expect(q.body.result.elements.map((e: { text: string }) => e.text)).not.toContain('Inner text');
  expect(q.body.result.iframes).toMatch(/^\d+ iframes in what was read: they are not searched; .*browser_snapshot/);
  const html = await h.callTool('browser_get_page_html', { tabId });
  expect(html.status).toBe(200);
  expect(html.body.result.iframes).toMatch(/^\d+ iframes in what was read: their content is not included here; browser_snapshot/);
  const part = await h.callTool('browser_get_page_html', { tabId, selector: 'h1' });
  expect(part.body.result.iframes).toBeUndefined();
  const plain = await h.context.newPage();
  await plain.goto(h.fixtureUrl('/plain-page.html'));
  const q2 = await h.callTool('browser_query_elements', { tabId: await h.tabIdOf(plain), selector: 'p' });
  expect(q2.body.result.iframes).toBeUndefined();
  await plain.close();
});

test('a tab that navigates to another site while its text is read does not get that site\'s iframes mixed in', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/outer.html?race'));
  const id = await h.tabIdOf(p);
  await waitUntil(() => p.frames().length === 5, 'the frames to load');
  const elsewhere = `http://127.0.0.1:${other.port}/elsewhere.html`;
  // The call's first look at the tab's frames (after the top page's own read) first navigates the tab.
  await navigateOnFirstUse(h, 'webNavigation.getAllFrames', id, elsewhere);
  const r = await h.callTool('browser_get_tab_content', { tabId: id });
  expect(JSON.stringify(r.body)).not.toContain(ELSEWHERE_MARK);
  expect(r.status).toBe(200);
  expect(r.body.result.content).toContain('Outer page');
  await p.close();
});
