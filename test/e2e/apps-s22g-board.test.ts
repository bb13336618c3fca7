/**
 * Drag and drop between lists as boards do it, and refs kept across the re-render that follows:
 * cards moved with pointer events (dnd-kit style: press, moves past an 8 px threshold, release),
 * items moved with HTML5 drag and drop (draggable, dataTransfer), each checked in the board's
 * own state (window.board). The board draws every card anew after each change: a ref from the
 * snapshot before acts on the card drawn in its place with the same content around it, or fails
 * naming it when there is not one such card.
 */
import { expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { resultOf, useFixtureTab, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const board = () => page.evaluate(() => { const b = (window as any).board; return { columns: b.columns, lists: b.lists, opened: b.opened, log: b.log }; });
const snapshot = async () => ok(await h.callTool('browser_snapshot', { tabId })).snapshot as string;
const refIn = (snap: string, re: RegExp) => {
  const ref = re.exec(snap)?.[1];
  if (!ref) throw new Error(`no ${re} in:\n${snap}`);
  return ref;
};

useFixtureTab('/pages/apps-s22g-board.html', (t) => ({ h, page, tabId } = t));

const ok = resultOf;

test('pointer drag: a card moves to another column, and before a given card', async () => {
  const snap = await snapshot();
  const r = ok(await h.callTool('browser_drag', { tabId, sourceSelector: '.card[data-column=todo][data-index="0"]', targetSelector: 'section[data-column=done]' }));
  expect(r).toMatchObject({ dragged: true, kind: 'pointer' });
  expect((await board()).columns).toEqual({ todo: ['Fix login bug', 'Untitled', 'Untitled'], doing: ['Review PR'], done: ['Write docs'] });
  // Refs from the snapshot taken before that re-render: the cards were drawn again. A card whose
  // column changed around it is not taken for the one the ref named: a new snapshot is asked for.
  const moved = await h.callTool('browser_drag', { tabId, sourceRef: refIn(snap, /Fix login bug \[(e\d+)\]/), targetRef: refIn(snap, /Review PR \[(e\d+)\]/) });
  expect(moved.body.error.message).toMatch(/^The drag's source: Unknown or stale ref e\d+: the element it named, <div class="card"> \("Fix login bug"\), was removed from the page/);
  const now = await snapshot();
  ok(await h.callTool('browser_drag', { tabId, sourceRef: refIn(now, /Fix login bug \[(e\d+)\]/), targetRef: refIn(snap, /Review PR \[(e\d+)\]/) }));
  const after = await board();
  expect(after.columns).toEqual({ todo: ['Untitled', 'Untitled'], doing: ['Fix login bug', 'Review PR'], done: ['Write docs'] });
  expect(after.log).toEqual(['start', 'drop done 0', 'start', 'drop doing 0']);
  // No click opened a card on the way.
  expect(after.opened).toEqual([]);
}, 60_000);

test('HTML5 drag and drop by refs: draggable items have refs, lists named by aria-label say it', async () => {
  const snap = await snapshot();
  expect(snap).toContain('list Backlog:\nlistitem Import users [e');
  expect(snap).toMatch(/list This sprint:\nlistitem Onboarding flow \[e\d+\]/);
  const r = ok(await h.callTool('browser_drag', { tabId, sourceRef: refIn(snap, /Import users \[(e\d+)\]/), targetRef: refIn(snap, /Onboarding flow \[(e\d+)\]/) }));
  expect(r).toMatchObject({ dragged: true, kind: 'html5' });
  expect((await board()).lists).toEqual({ backlog: ['Export report'], sprint: ['Import users', 'Onboarding flow'] });
  const interactive = ok(await h.callTool('browser_snapshot', { tabId, interactiveOnly: true })).snapshot as string;
  expect(interactive).toMatch(/^listitem Export report \[e\d+\]$/m);
}, 60_000);

test('HTML5 drag and drop: an item moves to the other list, its data carried', async () => {
  const r = ok(await h.callTool('browser_drag', { tabId, sourceSelector: 'li[data-list=backlog][data-index="1"]', targetSelector: 'ul[data-list=sprint]' }));
  expect(r).toMatchObject({ dragged: true, kind: 'html5' });
  expect((await board()).lists).toEqual({ backlog: ['Import users'], sprint: ['Onboarding flow', 'Export report'] });
  ok(await h.callTool('browser_drag', { tabId, sourceSelector: 'li[data-list=backlog]', targetSelector: 'li[data-list=sprint][data-index="0"]' }));
  expect((await board()).lists).toEqual({ backlog: [], sprint: ['Import users', 'Onboarding flow', 'Export report'] });
}, 60_000);

test('refs after a re-render: the card drawn in its place is clicked; an ambiguous one fails naming it', async () => {
  const snap = await snapshot();
  const review = refIn(snap, /Review PR \[(e\d+)\]/);
  const untitled = refIn(snap, /Untitled \[(e\d+)\]/);
  // Clicking opens a card and draws the board again: every card is a new element.
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(snap, /Write docs \[(e\d+)\]/) }));
  expect(await page.evaluate(() => (window as any).board.renders)).toBe(2);
  ok(await h.callTool('browser_click_element', { tabId, ref: review }));
  expect((await board()).opened).toEqual(['todo:Write docs', 'doing:Review PR']);
  // Two cards alike: which one took the old one's place cannot be told.
  const r = await h.callTool('browser_click_element', { tabId, ref: untitled });
  expect(r.status).toBe(404);
  expect(r.body.error.message).toBe(`Unknown or stale ref ${untitled}: the element it named, <div class="card"> ("Untitled"), was removed from the page and no one element like it took its place; take a new browser_snapshot`);
  expect((await board()).opened).toHaveLength(2);
  // The new snapshot's refs act.
  const again = await snapshot();
  ok(await h.callTool('browser_click_element', { tabId, ref: refIn(again, /Untitled \[(e\d+)\]/) }));
  expect((await board()).opened.at(-1)).toBe('todo:Untitled');
}, 60_000);

test('refs after a re-render: a row of other text is not taken for the removed one, though its button reads the same', async () => {
  await page.evaluate(() => {
    const ul = Object.assign(document.createElement('ul'), { id: 'rows' });
    (window as any).deleted = [];
    (window as any).drawRows = (names: string[]) => ul.replaceChildren(...names.map((n) => {
      const li = document.createElement('li');
      const b = Object.assign(document.createElement('button'), { textContent: 'Delete' });
      b.onclick = () => (window as any).deleted.push(n);
      li.append(`${n} `, b);
      return li;
    }));
    (window as any).drawRows(['Invoice 7']);
    document.body.append(ul);
  });
  const snap = await snapshot();
  const del = refIn(snap, /Invoice 7 button Delete \[(e\d+)\]/);
  // Drawn again alike: the ref acts on the new button.
  await page.evaluate(() => (window as any).drawRows(['Invoice 7']));
  ok(await h.callTool('browser_click_element', { tabId, ref: del }));
  // The row gone, another in its place: its Delete is not the one the ref named.
  await page.evaluate(() => (window as any).drawRows(['Invoice 8']));
  const r = await h.callTool('browser_click_element', { tabId, ref: del });
  expect(r.status).toBe(404);
  expect(r.body.error.message).toContain(`stale ref ${del}: the element it named, <button> ("Delete"), was removed`);
  expect(await page.evaluate(() => (window as any).deleted)).toEqual(['Invoice 7']);
}, 60_000);
