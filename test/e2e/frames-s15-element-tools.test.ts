/**
 * Frame refs (fFeN) in the element tools that took only the top page's refs, in Chromium with the
 * real extension: browser_drag inside a same-origin iframe (HTML5 and pointer drags) and inside an
 * iframe of another origin running in a process of its own; browser_screenshot_tab of an element
 * inside an iframe; a click on a button of another origin's iframe held by a same-origin iframe
 * (the input lookup walks down both); browser_force_pseudo_state on an element of a same-origin
 * iframe; the tools that do not reach a frame say so; drag and fill_form name the drag end or the
 * field in their lookup errors.
 */
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Frame, Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

/** HTML5 drag and drop (card onto bin) and a pointer-event drag (knob into slot), and a solid red block. */
const BOARD = `<!doctype html><title>Board</title><body style="margin:0">
<div id="card" draggable="true" role="button" aria-label="Card" style="position:absolute;left:10px;top:10px;width:60px;height:30px;background:#ddd">Card</div>
<div id="bin" role="button" aria-label="Bin" style="position:absolute;left:150px;top:10px;width:80px;height:40px;background:#eee">Bin</div>
<div id="knob" role="button" aria-label="Knob" style="position:absolute;left:10px;top:70px;width:30px;height:30px;background:#999;touch-action:none">K</div>
<div id="slot" role="button" aria-label="Slot" style="position:absolute;left:200px;top:70px;width:50px;height:40px;background:#eee">S</div>
<style>#red:hover { background: rgb(0,0,255) !important }</style>
<div id="red" role="button" aria-label="Red block" style="position:absolute;left:260px;top:10px;width:60px;height:30px;background:rgb(255,0,0)"></div>
<script>
window.log = { dropped: null, pointer: [], knob: null };
card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'the card'));
bin.addEventListener('dragover', (e) => e.preventDefault());
bin.addEventListener('drop', (e) => { e.preventDefault(); log.dropped = e.dataTransfer.getData('text/plain'); });
let down = false;
knob.addEventListener('pointerdown', (e) => { down = true; log.pointer.push('down'); knob.setPointerCapture(e.pointerId); });
knob.addEventListener('pointermove', (e) => { if (down && log.pointer.at(-1) !== 'move') log.pointer.push('move'); });
knob.addEventListener('pointerup', (e) => {
  down = false;
  log.pointer.push('up');
  const s = slot.getBoundingClientRect();
  log.knob = { inSlot: e.clientX >= s.left && e.clientX <= s.right && e.clientY >= s.top && e.clientY <= s.bottom, trusted: e.isTrusted };
});
</script></body>`;

const REMOTE_BUTTON = `<!doctype html><title>Remote button</title><body>
<button id="rb" onclick="window.remoteClicks = (window.remoteClicks || 0) + 1">Remote button</button></body>`;

let h: BrowserHarness;
let other: ReturnType<typeof Bun.serve>;
let page: Page;
let tabId = 0;

const html = (body: string, headers: Record<string, string> = {}) => new Response(body, { headers: { 'content-type': 'text/html', ...headers } });

beforeAll(async () => {
  // Another port of 127.0.0.1: another origin, which asks for an agent cluster (a process) of its own.
  other = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/board.html') return html(BOARD.replace('<title>Board</title>', '<title>Remote board</title>'), { 'origin-agent-cluster': '?1' });
      if (path === '/button.html') return html(REMOTE_BUTTON, { 'origin-agent-cluster': '?1' });
      return new Response('not found', { status: 404 });
    },
  });
  h = await startBrowserHarness({
    routes: (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/board.html') return html(BOARD);
      if (path === '/wrapper.html') {
        return html(`<!doctype html><title>Wrapper</title><body style="margin:0"><p>Wrapper text</p>
<iframe title="Nested remote" src="http://127.0.0.1:${other.port}/button.html" style="width:300px;height:80px;margin-left:20px"></iframe></body>`);
      }
      if (path === '/top.html') {
        return html(`<!doctype html><title>Top</title><body><h1>Top page</h1><button id="top">Top button</button>
<iframe title="Board" src="/board.html" style="width:360px;height:130px;margin-left:40px;border:3px solid #ccc"></iframe>
<iframe title="Remote" src="http://127.0.0.1:${other.port}/board.html" style="width:360px;height:130px"></iframe>
<iframe title="Wrapper" src="/wrapper.html" style="width:400px;height:160px;margin-left:15px"></iframe>
<p>After frames</p></body>`);
      }
      return undefined;
    },
  });
  page = await h.context.newPage();
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.goto(h.fixtureUrl('/top.html'));
  tabId = await h.tabIdOf(page);
  await waitUntil(() => page.frames().length === 5 && page.frames().every((f) => f.url() !== ''), 'the frames to load');
}, 60_000);

afterAll(async () => {
  await h?.stop();
  other?.stop(true);
});

function frameOf(pred: (f: Frame) => boolean): Frame {
  const f = page.frames().find(pred);
  if (!f) throw new Error('no such frame');
  return f;
}
const board = () => frameOf((f) => f.url() === h.fixtureUrl('/board.html'));
const remoteBoard = () => frameOf((f) => f.url() === `http://127.0.0.1:${other.port}/board.html`);
const remoteButton = () => frameOf((f) => f.url() === `http://127.0.0.1:${other.port}/button.html`);

async function snapshot(): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId });
  expect(r.status).toBe(200);
  return r.body.result.snapshot;
}

/** The ref of the line matching `re` under the iframe line starting with `iframe Title (`. */
function refUnder(snap: string, title: string, re: RegExp): string {
  const lines = snap.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith(`iframe ${title} (`));
  const head = lines[at] ?? '';
  const indent = head.length - head.trimStart().length;
  // A frame of one line has it on the iframe's own line.
  const body: string[] = [head.slice(head.indexOf('): ') + 1)];
  for (const l of lines.slice(at + 1)) {
    if (l.length - l.trimStart().length <= indent) break;
    body.push(l);
  }
  const ref = body.map((l) => re.exec(l)?.[1]).find(Boolean);
  expect({ title, re: String(re), ref, snap }).toEqual({ title, re: String(re), ref: expect.stringMatching(/^f\d+e\d+$/), snap });
  return ref!;
}

test('the remote frames run in processes of their own (what the input tools reach through the frame\'s DevTools session)', async () => {
  const sw = await h.serviceWorker();
  const frames = await sw.evaluate(async (t) => (await chrome.webNavigation.getAllFrames({ tabId: t }))!.map((f) => [f.url, f.processId] as const), tabId);
  const top = frames.find(([u]) => u.endsWith('/top.html'))![1];
  expect(frames.filter(([, p]) => p !== top).map(([u]) => new URL(u).pathname).sort()).toEqual(['/board.html', '/button.html']);
});

test('browser_drag with refs inside a same-origin iframe: an HTML5 drop and a pointer drag land there', async () => {
  const snap = await snapshot();
  const card = refUnder(snap, 'Board', /Card \[(f\d+e\d+)\]/);
  const bin = refUnder(snap, 'Board', /Bin \[(f\d+e\d+)\]/);
  const knob = refUnder(snap, 'Board', /Knob \[(f\d+e\d+)\]/);
  const slot = refUnder(snap, 'Board', /Slot \[(f\d+e\d+)\]/);
  const r = await h.callTool('browser_drag', { tabId, sourceRef: card, targetRef: bin });
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 200, body: { result: { dragged: true, kind: 'html5', from: { text: 'Card' }, to: { text: 'Bin' } } } });
  expect(await board().evaluate(() => (window as any).log.dropped)).toBe('the card');
  const p = await h.callTool('browser_drag', { tabId, sourceRef: knob, targetRef: slot });
  expect({ status: p.status, kind: p.body.result?.kind }).toEqual({ status: 200, kind: 'pointer' });
  const log = await board().evaluate(() => (window as any).log);
  expect(log.knob).toEqual({ inSlot: true, trusted: true });
  expect(log.pointer).toEqual(['down', 'move', 'up']);
}, 60_000);

test('browser_drag with refs inside another origin\'s iframe in a process of its own', async () => {
  const snap = await snapshot();
  const knob = refUnder(snap, 'Remote', /Knob \[(f\d+e\d+)\]/);
  const slot = refUnder(snap, 'Remote', /Slot \[(f\d+e\d+)\]/);
  const p = await h.callTool('browser_drag', { tabId, sourceRef: knob, targetRef: slot });
  expect({ status: p.status, kind: p.body.result?.kind, error: p.body.error }).toEqual({ status: 200, kind: 'pointer', error: undefined });
  const log = await remoteBoard().evaluate(() => (window as any).log);
  expect(log.knob).toEqual({ inSlot: true, trusted: true });
  const card = refUnder(snap, 'Remote', /Card \[(f\d+e\d+)\]/);
  const bin = refUnder(snap, 'Remote', /Bin \[(f\d+e\d+)\]/);
  const r = await h.callTool('browser_drag', { tabId, sourceRef: card, targetRef: bin });
  expect({ status: r.status, kind: r.body.result?.kind, error: r.body.error }).toEqual({ status: 200, kind: 'html5', error: undefined });
  expect(await remoteBoard().evaluate(() => (window as any).log.dropped)).toBe('the card');
}, 60_000);

test('browser_drag refuses ends in two documents, before anything moves', async () => {
  const snap = await snapshot();
  const card = refUnder(snap, 'Board', /Card \[(f\d+e\d+)\]/);
  const remoteBin = refUnder(snap, 'Remote', /Bin \[(f\d+e\d+)\]/);
  await board().evaluate(() => ((window as any).log = { dropped: null, pointer: [], knob: null }));
  for (const args of [{ sourceRef: card, targetRef: remoteBin }, { sourceRef: card, targetSelector: '#top' }]) {
    const r = await h.callTool('browser_drag', { tabId, ...args });
    expect({ status: r.status, message: r.body.error?.message }).toEqual({ status: 400, message: expect.stringContaining('different frames') });
  }
  expect(await board().evaluate(() => (window as any).log.dropped)).toBe(null);
});

test('drag and fill_form name the drag end or the field when the lookup fails', async () => {
  const r = await h.callTool('browser_drag', { tabId, sourceSelector: '#top', targetSelector: '#nope' });
  expect({ status: r.status, message: r.body.error?.message }).toEqual({ status: 404, message: expect.stringMatching(/^The drag's target: No element matches #nope/) });
  const bad = await h.callTool('browser_drag', { tabId, sourceSelector: '[[', targetSelector: '#top' });
  expect({ status: bad.status, message: bad.body.error?.message }).toEqual({ status: 400, message: "The drag's source: Invalid CSS selector: [[" });
  const stale = await h.callTool('browser_drag', { tabId, sourceRef: 'e999999', targetSelector: '#top' });
  expect({ status: stale.status, message: stale.body.error?.message }).toEqual({ status: 404, message: expect.stringMatching(/^The drag's source: Unknown or stale ref e999999/) });
  const f = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#nope', value: 'x' }] });
  expect({ status: f.status, message: f.body.error?.message }).toEqual({ status: 404, message: expect.stringMatching(/^fields\[0\]: No element matches #nope/) });
  const fb = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '[[', value: 'x' }] });
  expect({ status: fb.status, message: fb.body.error?.message }).toEqual({ status: 400, message: 'fields[0]: Invalid CSS selector: [[' });
  // The selector reaches into open shadow roots, as the element tools' selectors do.
  await page.evaluate(() => {
    const host = document.createElement('div');
    host.attachShadow({ mode: 'open' }).innerHTML = '<input id="deep-field">';
    document.body.append(host);
  });
  const deep = await h.callTool('browser_fill_form', { tabId, fields: [{ selector: '#deep-field', value: 'in shadow' }] });
  expect(deep.status).toBe(200);
  expect(await page.evaluate(() => (document.querySelector('div:last-of-type')!.shadowRoot!.querySelector('input') as HTMLInputElement).value)).toBe('in shadow');
});

/** The size and the RGB of the centre pixel of an 8-bit, non-interlaced RGB or RGBA PNG. */
function pngCentre(b64: string): { width: number; height: number; rgb: [number, number, number] } {
  const buf = Buffer.from(b64, 'base64');
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const colorType = buf[25]!;
  expect({ depth: buf[24], colorType: [2, 6].includes(colorType), interlace: buf[28] }).toEqual({ depth: 8, colorType: true, interlace: 0 });
  const bpp = colorType === 6 ? 4 : 3;
  const parts: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT') parts.push(buf.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(parts));
  const stride = width * bpp;
  let prev = Buffer.alloc(stride);
  let row = prev;
  const cy = Math.floor(height / 2);
  for (let y = 0; y <= cy; y++) {
    const f = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    row = Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? row[i - bpp]! : 0;
      const up = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      const pa = Math.abs(up - c);
      const pb = Math.abs(a - c);
      const pc = Math.abs(a + up - 2 * c);
      const pred = f === 0 ? 0 : f === 1 ? a : f === 2 ? up : f === 3 ? (a + up) >> 1 : pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
      row[i] = (line[i]! + pred) & 0xff;
    }
    prev = row;
  }
  const cx = Math.floor(width / 2) * bpp;
  return { width, height, rgb: [row[cx]!, row[cx + 1]!, row[cx + 2]!] };
}

test('browser_screenshot_tab of an element inside an iframe, by its frame ref', async () => {
  await page.evaluate(() => scrollTo(0, 0));
  const snap = await snapshot();
  for (const title of ['Board', 'Remote']) {
    const red = refUnder(snap, title, /Red block \[(f\d+e\d+)\]/);
    const r = await h.callTool('browser_screenshot_tab', { tabId, ref: red });
    expect({ title, status: r.status, error: r.body.error }).toEqual({ title, status: 200, error: undefined });
    const png = pngCentre(r.body.images[0].data);
    // The block is 60×30 CSS pixels (the device scale factor is 1 here), all red.
    expect({ title, ...png }).toEqual({ title, width: 60, height: 30, rgb: [255, 0, 0] });
  }
  // The top page scrolled: the clip follows (the iframe's box is taken where it is now).
  await page.evaluate(() => {
    document.body.style.paddingBottom = '2000px';
    scrollTo(0, 40);
  });
  const red = refUnder(snap, 'Board', /Red block \[(f\d+e\d+)\]/);
  const r = await h.callTool('browser_screenshot_tab', { tabId, ref: red });
  expect(r.status).toBe(200);
  expect(pngCentre(r.body.images[0].data)).toEqual({ width: 60, height: 30, rgb: [255, 0, 0] });
  await page.evaluate(() => {
    document.body.style.paddingBottom = '';
    scrollTo(0, 0);
  });
}, 60_000);

test('a click on a button of another origin\'s iframe inside a same-origin iframe lands', async () => {
  const snap = await snapshot();
  const button = refUnder(snap, 'Nested remote', /button Remote button \[(f\d+e\d+)\]/);
  const r = await h.callTool('browser_click_element', { tabId, ref: button });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 200, error: undefined });
  expect(await remoteButton().evaluate(() => (window as any).remoteClicks)).toBe(1);
}, 60_000);

test('browser_force_pseudo_state acts on an element of a same-origin iframe; one in another process\'s iframe is refused, as its description says', async () => {
  const snap = await snapshot();
  const red = refUnder(snap, 'Board', /Red block \[(f\d+e\d+)\]/);
  const colour = () => board().evaluate(() => getComputedStyle(document.getElementById('red')!).backgroundColor);
  expect(await colour()).toBe('rgb(255, 0, 0)');
  const on = await h.callTool('browser_force_pseudo_state', { tabId, ref: red, states: ['hover'] });
  expect({ status: on.status, body: on.body }).toMatchObject({ status: 200, body: { result: { tag: 'div', states: ['hover'], forcedElements: 1 } } });
  expect(await colour()).toBe('rgb(0, 0, 255)');
  const off = await h.callTool('browser_force_pseudo_state', { tabId, ref: red, states: [] });
  expect({ status: off.status, forced: off.body.result?.forcedElements }).toEqual({ status: 200, forced: 0 });
  expect(await colour()).toBe('rgb(255, 0, 0)');
  // No mark left behind in the frame's document.
  expect(await board().evaluate(() => document.querySelectorAll('[data-opentabs-node]').length)).toBe(0);

  const remoteRed = refUnder(snap, 'Remote', /Red block \[(f\d+e\d+)\]/);
  const r = await h.callTool('browser_force_pseudo_state', { tabId, ref: remoteRed, states: ['hover'] });
  expect({ status: r.status, message: r.body.error?.message }).toEqual({ status: 400, message: expect.stringContaining('in a process of its own') });
  const both = await h.callTool('browser_force_pseudo_state', { tabId, ref: red, selector: '#red', states: ['hover'] });
  expect(both.status).toBe(400);
}, 60_000);

test('browser_upload_file\'s description says it takes the top page\'s inputs only (a frame ref is refused: element-node.ts markElement), browser_force_pseudo_state\'s which iframes it cannot reach', async () => {
  const list = await (await fetch(`${h.url}/tools`, { headers: h.srv.auth })).json();
  const tools = (Array.isArray(list) ? list : (list?.tools ?? [])) as { name: string; description: string }[];
  expect(tools.find((t) => t.name === 'browser_upload_file')?.description).toContain('of the top page, not an iframe');
  expect(tools.find((t) => t.name === 'browser_force_pseudo_state')?.description).toContain('not in another site\'s iframe');
});
