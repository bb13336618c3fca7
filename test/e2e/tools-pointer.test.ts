/**
 * browser_click_at, browser_move_mouse and browser_drag in Chromium with the real extension: the
 * page sees trusted clicks at the given point, hover from a mouse move, an HTML5 drag and drop
 * (draggable source, drop handler reading the drag's data) and a pointer-event drag.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const log = () => page.evaluate(() => (window as any).log);

beforeAll(async () => {
  h = await startBrowserHarness({});
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/input-page.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('browser_click_at clicks the page at the point, with button, count and modifiers', async () => {
  const r = await h.callTool('browser_click_at', { tabId, x: 40, y: 50 });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ clicked: true, hit: { tag: 'div', id: 'pad' } });
  await h.callTool('browser_click_at', { tabId, x: 100, y: 120, clickCount: 2, modifiers: ['Shift'] });
  await h.callTool('browser_click_at', { tabId, x: 10, y: 10, button: 'right' });
  const clicks = await waitUntil(async () => ((await log()).clicks.length >= 5 ? (await log()).clicks : null), 'the clicks');
  expect(clicks[0]).toEqual({ x: 40, y: 50, detail: 1, button: 0, shift: false, trusted: true });
  expect(clicks[1]).toMatchObject({ x: 100, y: 120, detail: 1, shift: true, trusted: true });
  expect(clicks[2]).toMatchObject({ x: 100, y: 120, detail: 2, shift: true });
  expect(clicks[3]).toEqual({ dbl: true, trusted: true });
  expect(clicks[4]).toEqual({ context: true, button: 2 });
}, 60_000);

test('browser_click_at refuses a point outside the viewport', async () => {
  const r = await h.callTool('browser_click_at', { tabId, x: 50000, y: 10 });
  expect(r.status).toBe(400);
  expect(r.body.error.message).toContain('outside the visible page');
}, 30_000);

test('browser_move_mouse hovers: mouseenter and mousemove reach the page, :hover applies', async () => {
  const r = await h.callTool('browser_move_mouse', { tabId, x: 390, y: 50, steps: 5 });
  expect(r.status).toBe(200);
  expect(r.body.result.hit).toMatchObject({ id: 'hoverbox' });
  const l = await waitUntil(async () => ((await log()).hover ? await log() : null), 'the hover');
  expect(l.hover).toBe(true);
  expect(l.moves).toBeGreaterThanOrEqual(1);
  expect(await page.evaluate(() => document.getElementById('hoverbox')!.matches(':hover'))).toBe(true);
}, 30_000);

test('a mouse move or hover hands over the move and nothing else: no mouseup or click, focus, selection and text stay', async () => {
  // Each move is followed by a release of no button, which makes Chrome hand the move over at once
  // (a background tab draws no frames; see moveMouse in extension/tools/acting.ts).
  await page.evaluate(() => {
    const input = Object.assign(document.createElement('input'), { id: 'keep', value: 'hello' });
    const ce = Object.assign(document.createElement('div'), { id: 'ce', contentEditable: 'true', textContent: 'editable text' });
    document.body.append(input, ce);
    input.focus();
    input.setSelectionRange(0, 5);
    const seen: string[] = ((window as any).others = []);
    for (const t of ['mousedown', 'mouseup', 'click', 'auxclick', 'contextmenu', 'keydown', 'keypress', 'keyup', 'beforeinput', 'input', 'focusin', 'focusout']) {
      document.addEventListener(t, () => seen.push(t), true);
    }
    (window as any).moveCount = 0;
    document.addEventListener('mousemove', () => (window as any).moveCount++, true);
  });
  expect((await h.callTool('browser_move_mouse', { tabId, x: 200, y: 300 })).status).toBe(200);
  expect((await h.callTool('browser_move_mouse', { tabId, x: 240, y: 320, steps: 3 })).status).toBe(200);
  expect((await h.callTool('browser_hover_element', { tabId, selector: '#hoverbox' })).status).toBe(200);
  const field = await page.evaluate(() => {
    const i = document.getElementById('keep') as HTMLInputElement;
    return { others: (window as any).others, moves: (window as any).moveCount, active: document.activeElement?.id, value: i.value, sel: [i.selectionStart, i.selectionEnd] };
  });
  expect(field).toEqual({ others: [], moves: 5, active: 'keep', value: 'hello', sel: [0, 5] });
  // Selected text in an editable element stays selected and whole.
  await page.evaluate(() => {
    const ce = document.getElementById('ce')!;
    ce.focus();
    getSelection()!.selectAllChildren(ce);
  });
  expect((await h.callTool('browser_move_mouse', { tabId, x: 210, y: 300 })).status).toBe(200);
  const editable = await page.evaluate(() => ({ others: (window as any).others, text: document.getElementById('ce')!.textContent, sel: getSelection()!.toString() }));
  expect(editable).toEqual({ others: ['focusout', 'focusin'], text: 'editable text', sel: 'editable text' });
}, 30_000);

test('browser_drag: HTML5 drag and drop delivers the data to the drop target', async () => {
  const r = await h.callTool('browser_drag', { tabId, sourceSelector: '#drag-src', targetSelector: '#drop-zone' });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ dragged: true, kind: 'html5', from: { text: 'drag me' }, to: { tag: 'div' } });
  const l = await waitUntil(async () => ((await log()).drops.length ? await log() : null), 'the drop');
  expect(l.drops).toEqual(['payload-42']);
  expect(l.dragEvents.slice(0, 4)).toEqual(['dragstart', 'dragenter', 'dragover', 'drop']);
  expect(await page.evaluate(() => document.getElementById('drag-src')!.parentElement!.id)).toBe('drop-zone');
  // The page still takes ordinary clicks afterwards (no drag left hanging).
  const before = (await log()).clicks.length;
  await h.callTool('browser_click_at', { tabId, x: 20, y: 20 });
  await waitUntil(async () => (await log()).clicks.length > before, 'a click after the drag');
}, 60_000);

test('browser_drag: a pointer-event drag moves the knob into the slot', async () => {
  const r = await h.callTool('browser_drag', { tabId, sourceSelector: '#knob', targetSelector: '#slot' });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ dragged: true, kind: 'pointer' });
  const l = await waitUntil(async () => ((await log()).knob ? await log() : null), 'the knob dropped');
  expect(l.knob).toEqual({ inSlot: true, trusted: true });
  expect(l.pointer).toEqual(['down', 'move', 'up']);
}, 60_000);

test('browser_drag names a missing element', async () => {
  const r = await h.callTool('browser_drag', { tabId, sourceSelector: '#nope', targetSelector: '#slot' });
  expect(r.status).toBe(404);
  expect(r.body.error.message).toContain('#nope');
}, 30_000);
