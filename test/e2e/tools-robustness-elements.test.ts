/**
 * Element tools on elements a click cannot reach, in Chromium with the real extension. A trusted
 * click goes to whatever is at the point: a covered element, one with visibility: hidden, or one
 * outside the page that scrolling cannot bring into view used to report `clicked: true` while the
 * click reached another element or nothing. Now each is an error naming the problem (the cover by
 * its tag and id), and nothing is clicked; a label drawn over its own control still works. A ref
 * whose element was removed is an error for scroll and select too (scroll reported a scroll that
 * did nothing). A selector that matches only inside an iframe says frames are not searched. Two
 * calls at once marking one element (force_pseudo_state) both find it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

const PAGE = `<!doctype html><html><head><title>Elements</title><style>.chk { position: relative } .chk input { position: absolute; opacity: 0 } .chk span { display: inline-block; width: 40px; height: 20px; background: #ccc }</style></head>
<body style="height: 4000px">
<button id="plain" onclick="hits.push('plain')">Plain</button>
<button id="invisible" style="visibility: hidden" onclick="hits.push('invisible')">Invisible</button>
<div style="position: relative; width: 200px; margin: 40px 0"><button id="covered" onclick="hits.push('covered')">Covered</button><div id="cover" style="position: absolute; inset: -10px; background: red" onclick="hits.push('cover')"></div></div>
<button id="offleft" style="position: absolute; left: -500px; top: 200px" onclick="hits.push('offleft')">Off left</button>
<button id="far" style="position: absolute; top: 3500px" onclick="hits.push('far')">Far</button>
<label class="chk"><input type="checkbox" id="agree"><span></span> Agree</label>
<select id="sel"><option value="a">A</option><option value="b">B</option></select>
<button id="gone">Gone</button>
<iframe srcdoc="<button id='framed'>In a frame</button>"></iframe>
<script>window.hits = [];</script>
</body></html>`;

let h: BrowserHarness;
let page: Page;
let tabId = 0;

beforeAll(async () => {
  h = await startBrowserHarness({ routes: (req) => (new URL(req.url).pathname === '/elements.html' ? new Response(PAGE, { headers: { 'content-type': 'text/html' } }) : undefined) });
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/elements.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const hits = () => page.evaluate(() => (window as unknown as { hits: string[] }).hits.splice(0));

describe('clicks that could not reach their element', () => {
  test('a covered element: an error naming the cover, and neither is clicked', async () => {
    const r = await h.callTool('browser_click_element', { tabId, selector: '#covered' });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain('is covered by <div id="cover">');
    expect(await hits()).toEqual([]);
    // Hovering would reach the cover as well.
    expect((await h.callTool('browser_hover_element', { tabId, selector: '#covered' })).body.error.message).toContain('covered by');
  });

  test('visibility: hidden and out of the page: errors saying so, nothing clicked', async () => {
    const hidden = await h.callTool('browser_click_element', { tabId, selector: '#invisible' });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.message).toContain('visibility: hidden');
    const off = await h.callTool('browser_click_element', { tabId, selector: '#offleft' });
    expect(off.status).toBe(404);
    expect(off.body.error.message).toContain('outside the page');
    expect(await hits()).toEqual([]);
  });

  test('reachable elements still click: plain, scrolled into view, and a checkbox under its own label', async () => {
    for (const sel of ['#plain', '#far']) expect((await h.callTool('browser_click_element', { tabId, selector: sel })).status).toBe(200);
    expect(await hits()).toEqual(['plain', 'far']);
    const chk = await h.callTool('browser_click_element', { tabId, selector: '#agree' });
    expect(chk.status).toBe(200);
    expect(await page.isChecked('#agree')).toBe(true);
  });
});

test('an element inside an iframe: the error says frames are not searched', async () => {
  const r = await h.callTool('browser_click_element', { tabId, selector: '#framed' });
  expect(r.status).toBe(404);
  expect(r.body.error.message).toContain("iframes is not searched");
});

test('a ref to a removed element: scroll and select say it is stale instead of acting on nothing', async () => {
  const snap = await h.callTool('browser_snapshot', { tabId });
  const text: string = snap.body.result.snapshot;
  const goneRef = /Gone \[(e\d+)\]/.exec(text)?.[1];
  const selRef = /select[^\n]*\[(e\d+)\]/.exec(text)?.[1];
  expect(goneRef).toBeDefined();
  expect(selRef).toBeDefined();
  await page.evaluate(() => {
    document.getElementById('gone')!.remove();
    document.getElementById('sel')!.remove();
  });
  const scroll = await h.callTool('browser_scroll', { tabId, ref: goneRef });
  expect(scroll.status).toBe(404);
  expect(scroll.body.error.message).toContain(`stale ref ${goneRef}`);
  const select = await h.callTool('browser_select_option', { tabId, ref: selRef, value: 'b' });
  expect(select.status).toBe(404);
  expect(select.body.error.message).toContain(`stale ref ${selRef}`);
});

test('two calls at once on one element both find it', async () => {
  const [a, b] = await Promise.all([
    h.callTool('browser_force_pseudo_state', { tabId, selector: '#plain', states: ['hover'] }),
    h.callTool('browser_force_pseudo_state', { tabId, selector: '#plain', states: ['focus'] }),
  ]);
  expect([a.status, b.status, a.body.error?.message, b.body.error?.message]).toEqual([200, 200, undefined, undefined]);
  expect(await page.evaluate(() => document.querySelector('[data-opentabs-node]'))).toBeNull();
  expect((await h.callTool('browser_force_pseudo_state', { tabId, selector: '#plain', states: [] })).status).toBe(200);
});
