/**
 * browser_snapshot shows what iframes hold, in Chromium with the real extension: a same-origin
 * iframe, one from another origin (another port) running in a process of its own, one written by
 * srcdoc, one written into about:blank, each indented under its `iframe` line with refs (fFeN)
 * that click, type, press, hover, select, fill and scroll act on inside that frame; an
 * iframe showing a page the URL policy refuses (an extension page, a data: document) is a line
 * without its content and its refs are refused; iframes inside a shadow root are shown under
 * their own lines; selectors stay with the top page and say so.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { navigateOnFirstUse, startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

const INNER = `<!doctype html><title>Inner</title><body><p>Inner text</p>
<button id="ib" onclick="window.innerClicks = (window.innerClicks || 0) + 1">Inner button</button>
<input id="ii" aria-label="Inner field" onmouseover="window.hovered = true">
<select id="is" aria-label="Inner choice"><option value="a">Apple</option><option value="b">Banana</option></select></body>`;
const CROSS = `<!doctype html><title>Cross</title><body><p>Cross text</p>
<button id="cb" onclick="window.crossClicks = (window.crossClicks || 0) + 1" onmouseover="window.crossHovered = true">Cross button</button><input id="ci" aria-label="Cross field"></body>`;

const ELSEWHERE_MARK = 'only-on-the-other-site';
let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
let page: Page;
let tabId = 0;

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html' } });

beforeAll(async () => {
  // Another port of 127.0.0.1: another origin, which asks for an agent cluster (a process) of its own.
  other = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/cross.html') return new Response(CROSS, { headers: { 'content-type': 'text/html', 'origin-agent-cluster': '?1' } });
      // Another site the tab may be navigated to while a snapshot is being taken.
      if (path === '/elsewhere.html') return html(`<!doctype html><title>Elsewhere</title><iframe title="Theirs" srcdoc="<p>${ELSEWHERE_MARK}</p>"></iframe>`);
      return new Response('not found', { status: 404 });
    },
  });
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/inner.html') return html(INNER);
      if (path === '/shadow.html') {
        // Two iframes in a web component's open shadow root (the second made first, so the order
        // the browser made the frames in is not the page's), then a plain iframe after them.
        return html(`<!doctype html><title>Shadow</title><p>Host page</p><div id="host"></div>
<iframe title="Plain" srcdoc="<button onclick='parent.plainClicks = (parent.plainClicks || 0) + 1'>Plain button</button>"></iframe>
<script>
const root = document.getElementById('host').attachShadow({ mode: 'open' });
root.innerHTML = '<iframe title="Second in shadow" srcdoc="<button onclick=&quot;parent.shadowClicks = (parent.shadowClicks || 0) + 1&quot;>Second shadow button</button>"></iframe>';
const first = document.createElement('iframe');
first.title = 'In shadow';
first.srcdoc = '<button>Shadow button</button>';
root.prepend(first);
</script>`);
      }
      if (path === '/outer.html') {
        return html(`<!doctype html><title>Outer</title><body><h1>Outer page</h1><button id="top">Top button</button>
<iframe title="Same" src="/inner.html" style="width:400px;height:160px;margin-left:30px;border:5px solid #ccc"></iframe>
<div style="height:900px">spacer</div>
<iframe title="Other" src="http://127.0.0.1:${other.port}/cross.html" style="width:400px;height:120px"></iframe>
<iframe title="Written" srcdoc="<button onclick='parent.srcdocClicks = (parent.srcdocClicks || 0) + 1'>Srcdoc button</button>" style="height:60px"></iframe>
<iframe title="Blank" id="blank" style="height:60px"></iframe>
<script>document.getElementById('blank').contentDocument.body.innerHTML = '<textarea aria-label="Blank editor"></textarea>';</script>
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

function frameOf(url: string): Frame {
  const f = page.frames().find((x) => x.url().includes(url));
  if (!f) throw new Error(`no frame ${url}`);
  return f;
}

async function snapshot(args: Record<string, unknown> = {}): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId, ...args });
  expect(r.status).toBe(200);
  return r.body.result.snapshot;
}

const refIn = (snap: string, re: RegExp) => {
  const ref = re.exec(snap)?.[1];
  expect({ re: String(re), ref, snap }).toEqual({ re: String(re), ref: expect.stringMatching(/^f\d+e\d+$/), snap });
  return ref!;
};

test('each iframe\'s content is indented under its line, with frame refs; the top page\'s refs are unchanged', async () => {
  // The other origin asked for a process of its own (Origin-Agent-Cluster), as another site gets
  // under site isolation: its frame is out of process.
  const sw = await h.serviceWorker();
  const processes = await sw.evaluate(async (t) => (await chrome.webNavigation.getAllFrames({ tabId: t }))!.map((f) => [f.url, f.processId] as const), tabId);
  const top = processes.find(([u]) => u.endsWith('/outer.html'))![1];
  expect(processes.filter(([, p]) => p !== top).map(([u]) => u)).toEqual([`http://127.0.0.1:${other.port}/cross.html`]);
  const snap = await snapshot();
  expect(snap).toMatch(/^button Top button \[e\d+\]$/m);
  expect(snap).toMatch(new RegExp(`^iframe Same \\(${h.fixtureUrl('/inner.html').replace(/[.?]/g, '\\$&')}\\):\\n  Inner text\\n  button Inner button \\[f\\d+e\\d+\\]\\n  textbox Inner field \\[f\\d+e\\d+\\]\\n  select Inner choice = "Apple" \\(Apple \\| Banana\\) \\[f\\d+e\\d+\\]$`, 'm'));
  expect(snap).toMatch(new RegExp(`^iframe Other \\(http://127\\.0\\.0\\.1:${other.port}/cross\\.html\\):\\n  Cross text\\n  button Cross button \\[f\\d+e\\d+\\]`, 'm'));
  expect(snap).toMatch(/^iframe Written \(about:srcdoc\): button Srcdoc button \[f\d+e\d+\]$/m);
  // An about:blank iframe its parent wrote into.
  expect(snap).toMatch(/^iframe Blank \(about:blank\): textarea Blank editor \[f\d+e\d+\]$/m);
  // In page order: the frames' lines sit where their iframes are.
  expect(snap.indexOf('Inner text')).toBeGreaterThan(snap.indexOf('Top button'));
  expect(snap.indexOf('spacer')).toBeGreaterThan(snap.indexOf('Inner text'));
  expect(snap.indexOf('Cross text')).toBeGreaterThan(snap.indexOf('spacer'));
  expect(snap.indexOf('After frames')).toBeGreaterThan(snap.indexOf('Srcdoc button'));
  // interactiveOnly lists the frames' controls too.
  const flat = await snapshot({ interactiveOnly: true });
  expect(flat).toMatch(/^ {2}button Cross button \[f\d+e\d+\]$/m);
});

test('refs from inside iframes act there: click, type, press, hover, select, fill, styles and scroll', async () => {
  const snap = await snapshot();
  const innerButton = refIn(snap, /button Inner button \[(f\d+e\d+)\]/);
  const innerField = refIn(snap, /textbox Inner field \[(f\d+e\d+)\]/);
  const innerSelect = refIn(snap, /select Inner choice .* \[(f\d+e\d+)\]/);
  const crossButton = refIn(snap, /button Cross button \[(f\d+e\d+)\]/);
  const crossField = refIn(snap, /textbox Cross field \[(f\d+e\d+)\]/);
  const srcdocButton = refIn(snap, /button Srcdoc button \[(f\d+e\d+)\]/);
  const blankEditor = refIn(snap, /textarea Blank editor \[(f\d+e\d+)\]/);
  const inner = frameOf('/inner.html');
  const cross = frameOf('/cross.html');

  expect((await h.callTool('browser_click_element', { tabId, ref: innerButton })).status).toBe(200);
  expect(await inner.evaluate(() => (window as any).innerClicks)).toBe(1);
  // Something the top page draws over the iframe would take the click: said, not clicked.
  await page.evaluate(() => {
    const r = document.querySelector('iframe[title=Same]')!.getBoundingClientRect();
    document.body.insertAdjacentHTML('beforeend', `<div id="cover" style="position:absolute;left:${r.left + scrollX}px;top:${r.top + scrollY}px;width:${r.width}px;height:${r.height}px;background:rgba(0,0,0,.3)">Cookie banner</div>`);
  });
  const covered = await h.callTool('browser_click_element', { tabId, ref: innerButton });
  expect({ status: covered.status, message: covered.body.error?.message }).toEqual({ status: 404, message: expect.stringContaining('covered by <div id="cover"> ("Cookie banner")') });
  expect(await inner.evaluate(() => (window as any).innerClicks)).toBe(1);
  await page.evaluate(() => document.getElementById('cover')!.remove());
  // The cross-origin iframe is below the fold: it is scrolled into view for the click.
  expect((await h.callTool('browser_click_element', { tabId, ref: crossButton })).status).toBe(200);
  expect(await cross.evaluate(() => (window as any).crossClicks)).toBe(1);
  expect((await h.callTool('browser_click_element', { tabId, ref: srcdocButton })).status).toBe(200);
  expect(await page.evaluate(() => (window as any).srcdocClicks)).toBe(1);

  const typed = await h.callTool('browser_type_text', { tabId, ref: crossField, text: 'hello cross' });
  expect(typed.status).toBe(200);
  expect(await cross.inputValue('#ci')).toBe('hello cross');
  expect((await h.callTool('browser_type_text', { tabId, ref: innerField, text: 'hello inner' })).status).toBe(200);
  expect(await inner.inputValue('#ii')).toBe('hello inner');
  expect(await cross.inputValue('#ci')).toBe('hello cross');
  expect((await h.callTool('browser_press_key', { tabId, ref: crossField, key: 'x' })).status).toBe(200);
  expect(await cross.inputValue('#ci')).toBe('hello crossx');
  expect((await h.callTool('browser_type_text', { tabId, ref: blankEditor, text: 'in blank' })).status).toBe(200);
  expect(await page.evaluate(() => (document.getElementById('blank') as HTMLIFrameElement).contentDocument!.querySelector('textarea')!.value)).toBe('in blank');

  expect((await h.callTool('browser_hover_element', { tabId, ref: innerField })).status).toBe(200);
  expect(await inner.evaluate(() => (window as any).hovered)).toBe(true);
  expect((await h.callTool('browser_hover_element', { tabId, ref: crossButton })).status).toBe(200);
  expect(await cross.evaluate(() => (window as any).crossHovered)).toBe(true);

  const chosen = await h.callTool('browser_select_option', { tabId, ref: innerSelect, label: 'Banana' });
  expect(chosen.status).toBe(200);
  expect(await inner.inputValue('#is')).toBe('b');

  const filled = await h.callTool('browser_fill_form', { tabId, fields: [{ ref: innerField, value: 'filled' }, { ref: innerSelect, value: 'a' }] });
  expect(filled.status).toBe(200);
  expect([await inner.inputValue('#ii'), await inner.inputValue('#is')]).toEqual(['filled', 'a']);
  // One call fills one document: fields of two frames are refused before anything is filled.
  const mixed = await h.callTool('browser_fill_form', { tabId, fields: [{ ref: innerField, value: 'x' }, { ref: crossField, value: 'y' }] });
  expect(mixed.status).toBe(400);
  expect(mixed.body.error.message).toContain('different frames');
  expect([await inner.inputValue('#ii'), await cross.inputValue('#ci')]).toEqual(['filled', 'hello crossx']);

  // Read-only tools take the frame's refs too.
  const styles = await h.callTool('browser_get_styles', { tabId, ref: crossButton, properties: ['display'] });
  expect(styles.status).toBe(200);
  expect(styles.body.result).toMatchObject({ element: 'button', styles: { display: 'inline-block' } });

  // A tool that cannot reach into frames says so instead of looking the ref up in the top page.
  const pseudo = await h.callTool('browser_force_pseudo_state', { tabId, ref: crossButton, states: ['hover'] });
  expect({ status: pseudo.status, message: pseudo.body.error?.message }).toEqual({ status: 400, message: expect.stringContaining('inside an iframe') });

  await page.evaluate(() => scrollTo(0, 0));
  expect((await h.callTool('browser_scroll', { tabId, ref: crossButton })).status).toBe(200);
  expect(await page.evaluate(() => scrollY)).toBeGreaterThan(0);

  // A ref naming no frame of the tab is an error, not an action somewhere else.
  const gone = await h.callTool('browser_click_element', { tabId, ref: 'f999999e1' });
  expect(gone.status).toBe(404);
  expect(gone.body.error.message).toContain('take a new browser_snapshot');
});

test('an iframe showing a page tools may not read is a line without its content, and its refs are refused', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/inner.html'));
  const id = await h.tabIdOf(p);
  // An extension page and a data: document in iframes of an allowed page.
  await p.evaluate((src) => {
    for (const [title, url] of [['Extension', src], ['Data', 'data:text/html,<button>Data button</button>']]) {
      const f = document.createElement('iframe');
      f.title = title!;
      f.src = url!;
      document.body.append(f);
    }
  }, `chrome-extension://${h.extensionId}/sidepanel.html`);
  await waitUntil(() => p.frames().length === 3, 'the iframes to exist');
  await new Promise((r) => setTimeout(r, 500));
  const r = await h.callTool('browser_snapshot', { tabId: id });
  expect(r.status).toBe(200);
  const snap: string = r.body.result.snapshot;
  expect(snap).toMatch(/^iframe Extension \((chrome-extension|chrome-error):\/\/[^)]*\): not shown \(tools may not read it: [^)]+\)$/m);
  expect(snap).toMatch(/^iframe Data \(data:\): not shown \(tools may not read it: data: documents are not allowed\)$/m);
  expect(snap).not.toContain('Data button');
  expect(snap).toContain('Inner text');
  expect(snap.split('\n').filter((l) => l.startsWith('  '))).toEqual([]);
  // A ref into that frame is refused, not acted on.
  const sw = await h.serviceWorker();
  const frameId = await sw.evaluate(async (t) => (await chrome.webNavigation.getAllFrames({ tabId: t }))!.find((f) => f.url.startsWith('data:'))!.frameId, id);
  const refused = await h.callTool('browser_click_element', { tabId: id, ref: `f${frameId}e1` });
  expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 403, code: 'page_not_allowed' });
  await p.close();
});

test('iframes inside a shadow root are shown under their own lines, and so is a plain iframe after them', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/shadow.html'));
  await waitUntil(() => p.frames().length === 4 && p.frames().every((f) => f.url() !== ''), 'the frames to load');
  // Chrome leaves iframes inside shadow roots out of window.frames.
  expect(await p.evaluate(() => window.frames.length)).toBe(1);
  const id = await h.tabIdOf(p);
  const r = await h.callTool('browser_snapshot', { tabId: id });
  expect(r.status).toBe(200);
  const snap: string = r.body.result.snapshot;
  expect(snap).toMatch(/^Host page\niframe In shadow \(about:srcdoc\): button Shadow button \[f\d+e\d+\]\niframe Second in shadow \(about:srcdoc\): button Second shadow button \[f\d+e\d+\]\niframe Plain \(about:srcdoc\): button Plain button \[f\d+e\d+\]$/);
  // The plain iframe's ref acts in its frame (the frame is matched to its iframe and its index).
  const click = await h.callTool('browser_click_element', { tabId: id, ref: refIn(snap, /button Plain button \[(f\d+e\d+)\]/) });
  expect(click.status).toBe(200);
  await waitUntil(() => p.evaluate(() => (window as unknown as { plainClicks?: number }).plainClicks === 1), 'the click to be counted');
  // So does a ref inside a shadow root's iframe (not in window.frames: found by its position among the page's iframes).
  const inShadow = await h.callTool('browser_click_element', { tabId: id, ref: refIn(snap, /button Second shadow button \[(f\d+e\d+)\]/) });
  expect({ status: inShadow.status, error: inShadow.body.error?.message }).toEqual({ status: 200, error: undefined });
  await waitUntil(() => p.evaluate(() => (window as unknown as { shadowClicks?: number }).shadowClicks === 1), 'the click in the shadow root\'s iframe to be counted');
  await p.close();
});

test('a frame whose own process is busy does not hold the snapshot up: its line says so', async () => {
  const cross = frameOf('/cross.html');
  void cross.evaluate(() => setTimeout(() => { const t = Date.now(); while (Date.now() - t < 9000) {} }, 50));
  await new Promise((r) => setTimeout(r, 300));
  const snap = await snapshot();
  expect(snap).toMatch(new RegExp(`^iframe Other \\(http://127\\.0\\.0\\.1:${other.port}/cross\\.html\\): not shown \\(its content did not answer: not loaded yet, or its page is busy\\)$`, 'm'));
  expect(snap).toContain('Inner text');
  expect(snap).not.toContain('Cross text');
  await waitUntil(() => cross.evaluate(() => true), 'the frame to be free again', 20_000);
});

test('selectors stay with the top page and say that iframes are not searched', async () => {
  for (const [tool, args] of [
    ['browser_click_element', { selector: '#ib' }],
    ['browser_type_text', { selector: '#ii', text: 'x' }],
    ['browser_select_option', { selector: '#is', value: 'b' }],
    ['browser_scroll', { selector: '#cb' }],
    ['browser_fill_form', { fields: [{ selector: '#ii', value: 'x' }] }],
    ['browser_drag', { sourceSelector: '#ib', targetSelector: '#top' }],
  ] as const) {
    const r = await h.callTool(tool, { tabId, ...args });
    expect({ tool, status: r.status, message: r.body.error?.message }).toEqual({ tool, status: 404, message: expect.stringContaining('iframes is not searched') });
  }
});

test('a tab that navigates to another site while the snapshot is taken does not get that site\'s iframes merged into it', async () => {
  const p = await h.context.newPage();
  await p.goto(h.fixtureUrl('/outer.html?race'));
  const id = await h.tabIdOf(p);
  await waitUntil(() => p.frames().length === 5, 'the frames to load');
  const elsewhere = `http://127.0.0.1:${other.port}/elsewhere.html`;
  // The call's first look at the tab's frames (after the top page's own read) first navigates the tab.
  await navigateOnFirstUse(h, 'webNavigation.getAllFrames', id, elsewhere);
  const r = await h.callTool('browser_snapshot', { tabId: id });
  const text = JSON.stringify(r.body);
  expect(text).not.toContain(ELSEWHERE_MARK);
  if (r.status === 200) expect(r.body.result.snapshot).toContain('Outer page');
  await p.close();
});
