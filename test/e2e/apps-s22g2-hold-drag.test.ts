/**
 * browser_drag with holdMs, in Chromium with the real extension, on lists whose items start a
 * drag only once a press was held still for 250 ms (a delay activation, as touch-friendly drag
 * libraries have; a move before then cancels it). Without holdMs the first move follows the press
 * at once and the page cancels the drag: the item stays. With holdMs: 400 the button is held
 * still first and the item moves. The page measures the time from its events' timestamps; the
 * test reads only its state (window.dnd).
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;

useFixtureTab('/pages/apps-s22g2-hold-drag.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;
const dnd = () => page.evaluate(() => (window as any).dnd as { lists: Record<string, string[]>; log: string[] });

test('without holdMs a delay-activated drag is cancelled by the page: the item stays', async () => {
  const r = ok(await h.callTool('browser_drag', { tabId, sourceSelector: 'li[data-list=todo][data-index="0"]', targetSelector: '#packed' }));
  expect(r).toMatchObject({ dragged: true, kind: 'pointer' });
  const s = await dnd();
  expect(s.lists).toEqual({ todo: ['Passport', 'Charger', 'Towel'], packed: [] });
  expect(s.log).toHaveLength(1);
  expect(s.log[0]).toStartWith('cancelled: moved');
}, 60_000);

test('with holdMs: 400 the press is held still first: the item moves to the other list', async () => {
  const r = ok(await h.callTool('browser_drag', { tabId, sourceSelector: 'li[data-list=todo][data-index="1"]', targetSelector: '#packed', holdMs: 400 }));
  expect(r).toMatchObject({ dragged: true, kind: 'pointer' });
  expect(await dnd()).toEqual({ lists: { todo: ['Passport', 'Towel'], packed: ['Charger'] }, log: ['active', 'dropped Charger on packed'] });
  // By refs too, and back again.
  const snap = ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
  const charger = /listitem Charger \[(e\d+)\]/.exec(snap)?.[1];
  const passport = /listitem Passport \[(e\d+)\]/.exec(snap)?.[1];
  expect([charger, passport], snap).toEqual([expect.any(String), expect.any(String)]);
  ok(await h.callTool('browser_drag', { tabId, sourceRef: charger, targetRef: passport, holdMs: 400, steps: 3 }));
  expect((await dnd()).lists).toEqual({ todo: ['Passport', 'Towel', 'Charger'], packed: [] });
}, 60_000);

test('holdMs is bounded', async () => {
  for (const holdMs of [-1, 5001, 1.5]) {
    const r = await h.callTool('browser_drag', { tabId, sourceSelector: 'li', targetSelector: '#packed', holdMs });
    expect([holdMs, r.status]).toEqual([holdMs, 400]);
  }
  expect((await dnd()).log).toEqual([]);
}, 60_000);
