/**
 * Pointer input by coordinates and drag and drop, as trusted DevTools-protocol mouse events:
 * browser_click_at, browser_move_mouse and browser_drag.
 *
 * A drag is a real press on the source (held still for `holdMs` first, if given), moves and a
 * release on the target. If the press and first move start an HTML5 drag (a draggable element),
 * Chrome would run a native drag loop the protocol cannot steer, so drags are intercepted
 * (Input.setInterceptDrags) and the drag's data is carried to the target with
 * Input.dispatchDragEvent (dragenter, dragover, drop); otherwise the page got plain pointer/mouse
 * events all along (pointer-based drags).
 */
import { ToolError } from '../shared/tool-error.ts';
import { debuggerEvents } from './cdp-events.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { dialogNote, runWatchingDialogs } from './dialogs.ts';
import type { Handlers } from './types.ts';
import { checkedScriptTarget } from './url-policy.ts';
import { assertNotPasteButton, click, modifierMask, moveMouse } from './acting.ts';
import { assertFrameReachable } from './frame-modal.ts';
import { frameOfRef } from './frame-ref.ts';
import { frameOffset, frameTarget, withFrameInput, type OutOfProcessFrame } from './frames.ts';
import { assertMouseStaysOut, endPinned, pressGuard, refusedLoadError, watchMouseLoads, watchRefusedLoads } from './input-guard.ts';
import { runPage } from './page-run.ts';

/** Where the mouse was last put in each tab (move_mouse steps start there). */
const lastMouse = new Map<number, { x: number; y: number }>();

/** How long to wait after the first move for Chrome to report an HTML5 drag start. */
const DRAG_START_WAIT_MS = 300;

async function checkPoint(tabId: number, x: number, y: number) {
  const r = await runPage(await checkedScriptTarget(tabId), 'hitAt', [x, y]);
  if (!r) throw new ToolError(`Tab ${tabId} cannot be scripted (a browser page?)`, { code: 'not_available', category: 'validation' });
  if (x >= r.viewport.width || y >= r.viewport.height) {
    throw new ToolError(`(${x}, ${y}) is outside the visible page (${r.viewport.width}×${r.viewport.height} CSS pixels); scroll first or pass a point inside it`, { code: 'invalid_arguments', category: 'validation' });
  }
  // Not into an iframe showing a page the tools may not use.
  await assertMouseStaysOut(tabId, r.hit?.tag, { x, y });
  // Nor onto another extension's own controls drawn in the page (a password manager's menu).
  if (r.foreignUi) {
    throw new ToolError(`(${x}, ${y}) is on <${r.foreignUi}>, another extension's own controls drawn in the page (a closed shadow root the page's own code did not attach); the mouse would press them, so nothing was sent`, { code: 'page_not_allowed', category: 'auth' });
  }
  return r.hit;
}

interface DragData {
  items: { mimeType: string; data: string }[];
  files?: string[];
  dragOperationsMask: number;
}

/** Thrown inside dragWith when `stopped` tells of a refused frame loading: the gesture is ended there. */
class Stopped extends Error {}

/**
 * Press at `from`, hold still for `hold.ms`, move to `to` in `steps` moves and release there,
 * carrying an HTML5 drag if one starts. `tabSend`: the tab's own session when `send` sends the input to a frame in a process of
 * its own; drags are intercepted there too (with the frame's session alone Chrome reported no
 * HTML5 drag start in the frame). `stopped`, asked before each event: true once a frame of the tab
 * started loading a page the tools may not use; then nothing more is sent but the end of the
 * gesture (a release, or a cancelled HTML5 drag) with such iframes pinned pointer-events:none
 * (endPinned), and the drag fails.
 */
async function dragWith(tabId: number, send: CdpSend, from: { x: number; y: number }, to: { x: number; y: number }, steps: number, tabSend?: CdpSend, stopped: () => boolean = () => false, hold: { ms: number; signal?: AbortSignal } = { ms: 0 }): Promise<{ html5: boolean }> {
  let intercepted: DragData | null = null;
  let onDrag: (() => void) | null = null;
  const off = debuggerEvents(tabId, (method, params) => {
    if (method === 'Input.dragIntercepted') {
      intercepted = (params as { data: DragData }).data;
      onDrag?.();
    }
  });
  const at = (t: number) => ({ x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t });
  // Where the pointer is, whether the button is down, and the HTML5 drag under way.
  let now = { x: from.x, y: from.y };
  let down = false;
  let data: DragData | null = null;
  const go = () => {
    if (stopped()) throw new Stopped();
  };
  try {
    await send('Input.setInterceptDrags', { enabled: true });
    if (tabSend) await tabSend('Input.setInterceptDrags', { enabled: true });
    go();
    await moveMouse(send, { x: from.x, y: from.y });
    go();
    down = true;
    await send('Input.dispatchMouseEvent', { type: 'mousePressed', x: from.x, y: from.y, button: 'left', buttons: 1, clickCount: 1 });
    if (hold.ms > 0) {
      // Held still, as a person does for a drag that starts only after a delay; a call given up
      // meanwhile lets the button go where it was pressed and moves nothing.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, hold.ms);
        function done() {
          clearTimeout(timer);
          hold.signal?.removeEventListener('abort', done);
          resolve();
        }
        hold.signal?.addEventListener('abort', done);
        if (hold.signal?.aborted) done();
      });
      if (hold.signal?.aborted) {
        down = false;
        await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: from.x, y: from.y, button: 'left', buttons: 0, clickCount: 1 });
        hold.signal.throwIfAborted();
      }
    }
    // The first move: far enough for Chrome's drag threshold; an HTML5 drag starts here or never.
    const first = at(1 / steps);
    const nudge = Math.hypot(first.x - from.x, first.y - from.y) < 6 ? { x: from.x + 6, y: from.y } : first;
    go();
    now = nudge;
    await moveMouse(send, { ...nudge, button: 'left', buttons: 1 });
    if (!intercepted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DRAG_START_WAIT_MS);
        onDrag = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    data = intercepted as DragData | null;
    if (data) {
      // HTML5 drag: Chrome holds it; the target gets dragenter, dragover and drop with its data.
      go();
      await send('Input.dispatchDragEvent', { type: 'dragEnter', ...nudge, data });
      for (let i = 2; i <= steps; i++) {
        go();
        now = at(i / steps);
        await send('Input.dispatchDragEvent', { type: 'dragOver', ...now, data });
      }
      go();
      now = to;
      await send('Input.dispatchDragEvent', { type: 'dragOver', ...to, data });
      go();
      down = false;
      await send('Input.dispatchDragEvent', { type: 'drop', ...to, data });
      return { html5: true };
    }
    for (let i = 2; i <= steps; i++) {
      go();
      now = at(i / steps);
      await moveMouse(send, { ...now, button: 'left', buttons: 1 });
    }
    go();
    down = false;
    await send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...to, button: 'left', buttons: 0, clickCount: 1 });
    return { html5: false };
  } catch (err) {
    if (!(err instanceof Stopped)) throw err;
    const p = now;
    const d = data;
    if (down) await endPinned(tabId, () => (d ? send('Input.dispatchDragEvent', { type: 'dragCancel', ...p, data: d }) : send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...p, button: 'left', buttons: 0, clickCount: 1 })));
    throw err;
  } finally {
    off();
    await send('Input.setInterceptDrags', { enabled: false }).catch(() => {});
    if (tabSend) await tabSend('Input.setInterceptDrags', { enabled: false }).catch(() => {});
    lastMouse.set(tabId, { x: now.x, y: now.y });
  }
}

export const pointerTools = {
  async browser_click_at(input, ctx) {
    assertNotPasteButton(input.button);
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    // A refused frame that starts loading from here on was not there to be pinned: no click.
    const loads = watchMouseLoads(tabId, 'the click');
    try {
      const hit = await checkPoint(tabId, input.x, input.y);
      // A busy page can hold the check up past the call's timeout: then the caller was told it
      // failed, and the click must not land later.
      ctx.signal.throwIfAborted();
      const button = input.button ?? 'left';
      const count = input.clickCount ?? 1;
      const modifiers = modifierMask(input.modifiers);
      const p = { x: input.x, y: input.y };
      const guard = await pressGuard(tabId, p);
      const steps = guard && { beforeMove: async () => (await guard.beforeInput(), loads.check()), beforePress: async () => (await guard.beforePress(), loads.check()) };
      let r: Awaited<ReturnType<typeof runWatchingDialogs>> | undefined;
      try {
        r = await withDebugger(tabId, (send) => runWatchingDialogs(tabId, send, () => (loads.check(), click(send, p, button, count, modifiers, steps))));
      } finally {
        await guard?.afterPress(r?.dialog !== undefined);
      }
      lastMouse.set(tabId, p);
      return { value: { clicked: true, x: input.x, y: input.y, button, clickCount: count, hit, ...(r.dialog ? dialogNote(r.dialog) : {}) } };
    } finally {
      loads.stop();
    }
  },

  async browser_move_mouse(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    // A page can add an iframe of a refused page (or send one there) while the steps go on: no
    // step is sent once one starts loading.
    const loads = watchRefusedLoads(tabId);
    try {
      const hit = await checkPoint(tabId, input.x, input.y);
      ctx.signal.throwIfAborted(); // as for a click: no move after the caller was told it failed
      const to = { x: input.x, y: input.y };
      const steps = input.steps ?? 1;
      const from = lastMouse.get(tabId) ?? to;
      // The steps pass over whatever lies between the two points, and a page can move a refused
      // frame's iframe under them: such iframes are pinned pointer-events:none for all the moves.
      const guard = await pressGuard(tabId, to, 'move');
      let r: Awaited<ReturnType<typeof runWatchingDialogs>> | undefined;
      try {
        await guard?.beforeInput();
        r = await withDebugger(tabId, (send) =>
          runWatchingDialogs(tabId, send, async () => {
            for (let i = 1; i <= steps; i++) {
              const seen = loads.seen();
              if (seen) throw refusedLoadError(tabId, seen, 'the mouse moves');
              const t = i / steps;
              const p = { x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t };
              lastMouse.set(tabId, p);
              await moveMouse(send, p);
            }
          }),
        );
      } finally {
        await guard?.afterPress(r?.dialog !== undefined);
      }
      lastMouse.set(tabId, to);
      return { value: { moved: true, x: input.x, y: input.y, hit, ...(r.dialog ? dialogNote(r.dialog) : {}) } };
    } finally {
      loads.stop();
    }
  },

  async browser_drag(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    // Both ends in one document: the top page (selectors, eN refs) or one iframe (fFeN refs).
    const frameId = frameOfRef(input.sourceRef);
    if (frameOfRef(input.targetRef) !== frameId) {
      throw new ToolError('The source and the target are in different frames (refs fFeN name an iframe\'s element, selectors and eN refs the top page): browser_drag drags within one document', { code: 'invalid_arguments', category: 'validation' });
    }
    // A page can add an iframe of a refused page (or send one there) while the drag goes on
    // (the wait for an HTML5 drag to start alone leaves time for one to load): nothing more is
    // sent once one starts loading but the gesture's end, pinned (dragWith).
    const loads = watchRefusedLoads(tabId);
    try {
      const ref = input.sourceRef ?? input.targetRef;
      // Elements in an iframe behind a modal dialog of a page above it are out of a user's reach.
      await assertFrameReachable(tabId, frameId, ref, { subject: `The drag's ${input.sourceRef ? 'source' : 'target'} ${ref}`, undone: 'nothing was dragged' });
      // Finding the two elements scrolls them into view: not once the call was given up while a busy page held it up.
      const r = await runPage(await frameTarget(tabId, frameId, ref), 'dragPoints', [input.sourceSelector ?? null, input.sourceRef ?? null, input.targetSelector ?? null, input.targetRef ?? null], ctx.signal);
      if (!r) throw new ToolError(`Tab ${tabId} cannot be scripted (a browser page?)`, { code: 'not_available', category: 'validation' });
      if ('error' in r) throw new ToolError(r.error, { code: r.validation ? 'invalid_arguments' : 'not_found', category: r.validation ? 'validation' : 'not_found' });
      let { from, to } = r;
      for (const end of [from, to]) await assertMouseStaysOut(tabId, end.tag, frameId ? undefined : end);
      let oopif: OutOfProcessFrame | null = null;
      if (frameId) {
        // Points in the iframe move by the boxes of the iframes holding it into the tab's viewport
        // (as for a click on a frame ref: acting.ts point()).
        ctx.signal.throwIfAborted();
        const offset = await frameOffset(tabId, frameId);
        from = { ...from, x: from.x + offset.x, y: from.y + offset.y };
        to = { ...to, x: to.x + offset.x, y: to.y + offset.y };
        const c = offset.clip;
        for (const [what, p] of [['source', from], ['target', to]] as const) {
          if (p.x < c.left || p.y < c.top || p.x >= c.right || p.y >= c.bottom) {
            throw new ToolError(`The drag's ${what} ${ref} is outside the visible part of its iframe (its centre is at ${Math.round(p.x)},${Math.round(p.y)} in the tab); make the window larger so the iframe shows it`, { code: 'not_found', category: 'not_found' });
          }
          const cover = await offset.coverAt(p.x, p.y);
          if (cover) throw new ToolError(`The drag's ${what} is covered by ${cover}, drawn over its iframe at its centre: the mouse would reach that element instead`, { code: 'not_found', category: 'not_found' });
        }
        oopif = offset.oopif;
      }
      // Iframes of refused pages are pinned pointer-events:none for the whole drag, as for a click's
      // press: a page moving one under the path or the target meanwhile gets the events on what is
      // under it (an iframe's elements too: the page can move one over that iframe).
      const guard = await pressGuard(tabId, from, 'press', frameId !== 0);
      let out: Awaited<ReturnType<typeof runWatchingDialogs<{ html5: boolean }>>> | undefined;
      try {
        ctx.signal.throwIfAborted(); // as for a click: no drag after the caller was told it failed
        await guard?.beforeInput();
        out = await withDebugger(tabId, (send) =>
          runWatchingDialogs(tabId, send, () =>
            // A frame in a process of its own takes the events in its own viewport's coordinates.
            withFrameInput(tabId, send, oopif, from, (s, at) => dragWith(tabId, s, at, { x: to.x - (from.x - at.x), y: to.y - (from.y - at.y) }, input.steps ?? 10, oopif ? send : undefined, () => loads.seen() !== null, { ms: input.holdMs ?? 0, signal: ctx.signal })),
          ),
        );
      } finally {
        await guard?.afterPress(out?.dialog !== undefined);
      }
      lastMouse.set(tabId, { x: to.x, y: to.y });
      return {
        value: {
          dragged: !out.dialog,
          kind: out.result?.html5 ? 'html5' : 'pointer',
          from: { tag: from.tag, text: from.text, x: Math.round(from.x), y: Math.round(from.y) },
          to: { tag: to.tag, text: to.text, x: Math.round(to.x), y: Math.round(to.y) },
          ...(out.dialog ? dialogNote(out.dialog) : {}),
        },
      };
    } catch (err) {
      const seen = loads.seen();
      if (err instanceof Stopped && seen) throw refusedLoadError(tabId, seen, 'the drag');
      throw err;
    } finally {
      loads.stop();
    }
  },
} satisfies Partial<Handlers>;
