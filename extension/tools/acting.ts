/**
 * The acting group: trusted input (clicks, typing, keys, hover) through the DevTools protocol, so
 * pages see real events (isTrusted), plus select and scroll done in the page. Elements are found by
 * CSS selector (piercing open shadow roots; the top page only) or by a ref from browser_snapshot,
 * which may name an element inside an iframe (frames.ts).
 */
import { ToolError } from '../shared/tool-error.ts';
import { serialPerTab } from './cdp-events.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { dialogNote, runWatchingDialogs } from './dialogs.ts';
import { assertFocusReachable, assertFrameReachable } from './frame-modal.ts';
import { frameOfRef } from './frame-ref.ts';
import { frameOffset, frameTarget, withFrameInput, type OutOfProcessFrame } from './frames.ts';
import { assertKeysStayOut, assertMouseStaysOut, pressGuard, watchMouseLoads } from './input-guard.ts';
import { runPage } from './page-run.ts';
import type { Handlers } from './types.ts';

type Point = { x: number; y: number; tag: string; text: string; oopif?: OutOfProcessFrame | null };

/**
 * An error the page-side lookup reported: a selector that is not valid CSS, or no selector and no
 * ref, is the caller's mistake (invalid_arguments, as the tools checking it themselves say);
 * anything else names an element that is not there or cannot be used (not_found).
 */
export function pageFindError(message: string): ToolError {
  const bad = message.startsWith('Pass') || message.startsWith('Invalid CSS selector');
  return new ToolError(message, bad ? { code: 'invalid_arguments', category: 'validation' } : { code: 'not_found', category: 'not_found' });
}

/**
 * The element's centre in the tab's viewport, after scrolling it into view (and with `focus`,
 * focusing it). With `signal`, nothing of this happens once the call was given up while a busy
 * page held the lookup up.
 */
export async function point(tabId: number, input: { selector?: string; ref?: string }, focus = false, clear = false, takesText = false, signal?: AbortSignal): Promise<Point> {
  // Both would be ambiguous: say so instead of silently picking one.
  if (input.selector !== undefined && input.ref !== undefined) {
    throw new ToolError('Pass either selector or ref, not both (they may name different elements)', { code: 'invalid_arguments', category: 'validation' });
  }
  const frameId = frameOfRef(input.ref);
  const target = await frameTarget(tabId, frameId, input.ref);
  const r = await runPage(target, 'locate', [input.selector ?? null, input.ref ?? null, focus, clear, takesText], signal);
  if (!r) throw new ToolError(`Tab ${tabId} cannot be scripted (a browser page?)`, { code: 'not_available', category: 'validation' });
  if ('error' in r) throw pageFindError(r.error);
  if (!frameId) return r;
  // An element in an iframe: its point in the frame moves by the boxes of the iframes holding it
  // (measured after the lookup, whose scrolling into view also scrolls the pages above) into the
  // tab's viewport, where the mouse events go.
  signal?.throwIfAborted();
  const offset = await frameOffset(tabId, frameId);
  const at = { ...r, x: r.x + offset.x, y: r.y + offset.y };
  const c = offset.clip;
  if (!focus && (at.x < c.left || at.y < c.top || at.x >= c.right || at.y >= c.bottom)) {
    throw new ToolError(`The element ${input.ref} is outside the visible part of its iframe (its centre is at ${Math.round(at.x)},${Math.round(at.y)} in the tab) and cannot be scrolled into view`, { code: 'not_found', category: 'not_found' });
  }
  // As in the top page: a mouse event goes to whatever is drawn at the point, here maybe over the iframe.
  const cover = focus ? null : await offset.coverAt(at.x, at.y);
  if (cover) {
    throw new ToolError(`The element ${input.ref} is covered by ${cover}, drawn over its iframe at its centre: the mouse would reach that element instead. Close or move what covers it, or act on that element`, { code: 'not_found', category: 'not_found' });
  }
  return { ...at, oopif: offset.oopif };
}

const MODIFIER_BITS: Record<string, number> = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
/** CDP's modifiers bit field for the keys held (Alt, Control, Meta, Shift). */
export const modifierMask = (mods: unknown) => (Array.isArray(mods) ? mods.reduce((m: number, k) => m | (MODIFIER_BITS[String(k)] ?? 0), 0) : 0);

/** Key definitions for CDP Input.dispatchKeyEvent (named keys; one printable character otherwise). */
const KEYS: Record<string, { code: string; keyCode: number; text?: string }> = {
  Enter: { code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { code: 'Tab', keyCode: 9 },
  Escape: { code: 'Escape', keyCode: 27 },
  Backspace: { code: 'Backspace', keyCode: 8 },
  Delete: { code: 'Delete', keyCode: 46 },
  ArrowUp: { code: 'ArrowUp', keyCode: 38 },
  ArrowDown: { code: 'ArrowDown', keyCode: 40 },
  ArrowLeft: { code: 'ArrowLeft', keyCode: 37 },
  ArrowRight: { code: 'ArrowRight', keyCode: 39 },
  Home: { code: 'Home', keyCode: 36 },
  End: { code: 'End', keyCode: 35 },
  PageUp: { code: 'PageUp', keyCode: 33 },
  PageDown: { code: 'PageDown', keyCode: 34 },
  ' ': { code: 'Space', keyCode: 32, text: ' ' },
};

/** The US-layout key of each ASCII punctuation character: its code and Windows key code (shifted ones share their key's). */
const PUNCTUATION: Record<string, [string, number]> = {
  '!': ['Digit1', 49], '@': ['Digit2', 50], '#': ['Digit3', 51], $: ['Digit4', 52], '%': ['Digit5', 53], '^': ['Digit6', 54],
  '&': ['Digit7', 55], '*': ['Digit8', 56], '(': ['Digit9', 57], ')': ['Digit0', 48], '-': ['Minus', 189], _: ['Minus', 189],
  '=': ['Equal', 187], '+': ['Equal', 187], '[': ['BracketLeft', 219], '{': ['BracketLeft', 219], ']': ['BracketRight', 221],
  '}': ['BracketRight', 221], '\\': ['Backslash', 220], '|': ['Backslash', 220], ';': ['Semicolon', 186], ':': ['Semicolon', 186],
  "'": ['Quote', 222], '"': ['Quote', 222], ',': ['Comma', 188], '<': ['Comma', 188], '.': ['Period', 190], '>': ['Period', 190],
  '/': ['Slash', 191], '?': ['Slash', 191], '`': ['Backquote', 192], '~': ['Backquote', 192],
};

/**
 * Key presses that paste: the V key with Control (Linux, Windows) or Meta (Command on macOS), Shift
 * and Alt or not. Chrome runs the paste command for a trusted key press whatever the page's
 * clipboard permissions, and the page's paste listeners read what the user copied (a password, a
 * token, from any program), even with no field focused. The tools do not read the user's
 * clipboard: refused. (Shift+Insert, the other paste key, is not a key the tool sends.)
 */
function assertNotPaste(key: string, modifiers: number): void {
  if ((key === 'v' || key === 'V') && modifiers & (2 | 4)) {
    throw new ToolError('Control+V and Meta+V are refused: they paste the user\'s clipboard, which may hold a password or a token copied elsewhere, into the page. Type the text with browser_type_text', { code: 'invalid_arguments', category: 'validation' });
  }
}

/**
 * The middle button is refused: on Linux a middle click pastes the primary selection (the text
 * selected last anywhere on the computer, e.g. a password in a terminal) into the page, and the
 * page's paste listeners read it. Open a link in a new tab with browser_open_tab.
 */
export function assertNotPasteButton(button: unknown): void {
  if (button === 'middle') {
    throw new ToolError('The middle button is refused: on Linux a middle click pastes the text the user selected last, in any program, into the page. Click with left or right; to open a link in a new tab use browser_open_tab', { code: 'invalid_arguments', category: 'validation' });
  }
}

async function pressKey(send: CdpSend, key: string, modifiers: number): Promise<void> {
  let def = KEYS[key];
  if (!def) {
    if ([...key].length !== 1) throw new ToolError(`Unknown key "${key}"; use one character or one of ${Object.keys(KEYS).filter((k) => k !== ' ').join(', ')}`, { code: 'invalid_arguments', category: 'validation' });
    const upper = key.toUpperCase();
    const punct = PUNCTUATION[key];
    // A character's own code is no key code: '(' is 40, ArrowDown's, and Chrome moved the caret
    // instead of typing it ('.', '#', '$', '%', '&', "'" likewise).
    def = /^[a-z]$/i.test(key) ? { code: `Key${upper}`, keyCode: upper.charCodeAt(0), text: key }
      : /^[0-9]$/.test(key) ? { code: `Digit${key}`, keyCode: key.charCodeAt(0), text: key }
      : punct ? { code: punct[0], keyCode: punct[1], text: key }
      : { code: '', keyCode: 0, text: key };
  }
  assertNotPaste(key, modifiers);
  // With Ctrl/Alt/Meta held the key is a shortcut, not text.
  const text = modifiers & (1 | 2 | 4) ? undefined : def.text;
  // Sent together: commands to one target run in the order sent, and the page's input queue keeps
  // that order, so this is the same key press one round trip sooner.
  await Promise.all([
    send('Input.dispatchKeyEvent', { type: text ? 'keyDown' : 'rawKeyDown', key, code: def.code, windowsVirtualKeyCode: def.keyCode, modifiers, ...(text ? { text, unmodifiedText: text } : {}) }),
    send('Input.dispatchKeyEvent', { type: 'keyUp', key, code: def.code, windowsVirtualKeyCode: def.keyCode, modifiers }),
  ]);
}

/** Printable ASCII: the characters a US keyboard has a key for, typed with key events when `keystrokes`. */
const HAS_KEY = /^[\x20-\x7e]$/;
/** Characters typed with Shift held on a US keyboard (their key events say shiftKey). */
const SHIFTED = /^[A-Z!@#$%^&*()_+{}|:"<>?~]$/;

/** The left Shift key, pressed down before a run of shifted characters and let go after it. */
const SHIFT_KEY = { key: 'Shift', code: 'ShiftLeft', windowsVirtualKeyCode: 16, location: 1 };

/**
 * Types `text` one character at a time as a person does: a key press (keydown with the
 * character, keypress, input, keyup) for each character a US keyboard has a key for; Shift goes
 * down (its own keydown) before a run of capitals and shifted punctuation, which then say
 * shiftKey, and up (its keyup) after it. A line break (\n, \r\n or \r) is a press of Enter: a new
 * line in a textarea or an editable element, the Enter key (which may submit) in a one-line field.
 * A tab character is a press of the Tab key: the page gets its keydown, and unless it prevents it
 * the browser moves the focus on to the next control (the rest of the text goes there), as a
 * keyboard's Tab does; it types no tab character. A character with no key (é, an emoji, CJK) is
 * inserted as text (one input event, no key events), as an input method does. `next(i)` runs before character i is sent and throws to send
 * no more; Shift down at the end is let go when `mayRelease()` says the page may still get keys.
 */
export async function typeKeys(send: CdpSend, text: string, next: (i: number) => void, mayRelease: () => boolean = () => true): Promise<void> {
  const chars = [...text];
  let shift = false;
  const shiftUp = async () => {
    shift = false;
    await send('Input.dispatchKeyEvent', { type: 'keyUp', ...SHIFT_KEY, modifiers: 0 });
  };
  try {
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i]!;
      if (c === '\r' && chars[i + 1] === '\n') continue; // one line break, one Enter
      next(i);
      const shifted = SHIFTED.test(c);
      if (shift && !shifted) await shiftUp();
      if (shifted && !shift) {
        await send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...SHIFT_KEY, modifiers: MODIFIER_BITS.Shift! });
        shift = true;
      }
      if (c === '\n' || c === '\r') await pressKey(send, 'Enter', 0);
      else if (c === '\t') await pressKey(send, 'Tab', 0);
      else if (HAS_KEY.test(c)) await pressKey(send, c, shifted ? MODIFIER_BITS.Shift! : 0);
      else await send('Input.insertText', { text: c });
    }
  } finally {
    // Shift down after the last character, or when the typing stopped (the call cancelled): let go.
    if (shift && mayRelease()) await shiftUp().catch(() => {});
  }
}

/**
 * Watches tab `tabId` from now until stop() for its top frame starting to load, or committing,
 * another document: left() says whether it did.
 */
function watchTopNavigation(tabId: number): { left: () => boolean; stop: () => void } {
  let left = false;
  const on = (d: { tabId: number; frameId: number }) => {
    if (d.tabId === tabId && d.frameId === 0) left = true;
  };
  chrome.webNavigation.onBeforeNavigate.addListener(on);
  chrome.webNavigation.onCommitted.addListener(on);
  return {
    left: () => left,
    stop: () => {
      chrome.webNavigation.onBeforeNavigate.removeListener(on);
      chrome.webNavigation.onCommitted.removeListener(on);
    },
  };
}

/**
 * A mouse move, answered once the page has it. Chrome hands a move to the page with the page's
 * next frame, and the protocol answers then: 16 ms in a tab on screen, but a tab the user is not
 * looking at (a background tab, a minimized window) draws no frames, and there each move waited
 * ≈ 5 s (measured in a headed Chrome: a hover 5.0 s, a three-step drag 15 s). A button event is
 * handed over at once and takes the queued move with it, so the move is followed by a release of
 * no button (`buttons` still names what a drag holds): the page sees no mouseup, click or other
 * event from it, and focus, selection and a drag in progress stay as they are. (An empty `char`
 * key event also flushes, but reaches keypress listeners; an empty insertText or IME text deletes
 * selected text.)
 */
export async function moveMouse(send: CdpSend, p: { x: number; y: number; modifiers?: number; button?: string; buttons?: number }): Promise<void> {
  await Promise.all([
    send('Input.dispatchMouseEvent', { type: 'mouseMoved', ...p }),
    send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...p, button: 'none', clickCount: 0 }),
  ]);
}

/**
 * A real mouse click (or double/triple click) at a point of the viewport. With `steps`, the move
 * is sent alone: `beforeMove` runs before it (it throws to send nothing), and `beforePress` once
 * the page has it (its mousemove handlers have run, and may have moved something under the
 * pointer); it throws to send no press.
 */
export async function click(send: CdpSend, p: { x: number; y: number }, button: string, clickCount: number, modifiers: number, steps?: { beforeMove: () => Promise<void>; beforePress: () => Promise<void> }): Promise<void> {
  if (steps) {
    await steps.beforeMove();
    await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: p.x, y: p.y, modifiers });
    await steps.beforePress();
  }
  // One round trip for the whole gesture (see pressKey): move, then press/release per click.
  const events: Promise<unknown>[] = steps ? [] : [send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: p.x, y: p.y, modifiers })];
  for (let i = 1; i <= clickCount; i++) {
    events.push(send('Input.dispatchMouseEvent', { type: 'mousePressed', x: p.x, y: p.y, button, clickCount: i, modifiers }));
    events.push(send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: p.x, y: p.y, button, clickCount: i, modifiers }));
  }
  await Promise.all(events);
}

function pageError(r: { error?: string } | null | undefined): void {
  if (!r) throw new ToolError('This tab cannot be scripted (a browser page?)', { code: 'not_available', category: 'validation' });
  if (r.error) throw pageFindError(r.error);
}

/**
 * A tab has one mouse and one keyboard: input calls on it run one after the other. Two at once
 * interleaved (both typed into one field: each found it, selected its text, then both inserted,
 * leaving "AAAABBBB" while each reported replacing it; a click could land between a type's focus
 * and its text).
 */
function oneInputAtATime<T>(tabId: number, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  // A call cancelled (or timed out) while it waited for its turn does not act afterwards.
  return serialPerTab('input', tabId, () => (signal.throwIfAborted(), fn()));
}

export const actingTools = {
  async browser_click_element(input, ctx) {
    assertNotPasteButton(input.button);
    const tab = await ctx.tab(input.tabId);
    return oneInputAtATime(tab.id!, ctx.signal, async () => {
      // A refused frame that starts loading from here on was not there to be pinned: no click.
      const loads = watchMouseLoads(tab.id!, 'the click');
      try {
        // An element in an iframe behind a modal dialog of a page above it is out of a user's reach.
        await assertFrameReachable(tab.id!, frameOfRef(input.ref), input.ref, { undone: 'nothing was clicked' });
        const p = await point(tab.id!, input, false, false, false, ctx.signal);
        const inFrame = frameOfRef(input.ref) !== 0;
        await assertMouseStaysOut(tab.id!, p.tag, inFrame ? undefined : p);
        // An iframe's element too: a page can move a refused frame's iframe over that iframe.
        const guard = await pressGuard(tab.id!, p, 'press', inFrame);
        const steps = guard && { beforeMove: async () => (await guard.beforeInput(), loads.check()), beforePress: async () => (await guard.beforePress(), loads.check()) };
        let r: Awaited<ReturnType<typeof runWatchingDialogs>> | undefined;
        try {
          // A busy page can hold the lookup up past the call's timeout: then the caller was told it
          // failed, and the click must not land later.
          ctx.signal.throwIfAborted();
          r = await withDebugger(tab.id!, (send) =>
            runWatchingDialogs(tab.id!, send, () =>
              withFrameInput(tab.id!, send, p.oopif ?? null, p, (s, at) => (loads.check(), click(s, at, input.button ?? 'left', input.clickCount ?? 1, modifierMask(input.modifiers), steps))),
            ),
          );
        } finally {
          await guard?.afterPress(r?.dialog !== undefined);
        }
        return { value: { clicked: true, tag: p.tag, text: p.text, x: Math.round(p.x), y: Math.round(p.y), ...(r.dialog ? dialogNote(r.dialog) : {}) } };
      } finally {
        loads.stop();
      }
    });
  },

  async browser_type_text(input, ctx) {
    if (input.append === true && input.clear === true) {
      throw new ToolError('append and clear contradict each other: append adds to the field, clear (the default) replaces what it holds', { code: 'invalid_arguments', category: 'validation' });
    }
    // Replace by default, as people and other automation tools expect; append only when asked.
    const replace = input.append !== true;
    const tab = await ctx.tab(input.tabId);
    return oneInputAtATime(tab.id!, ctx.signal, async () => {
      // A field in an iframe behind a modal dialog of a page above it is out of a user's reach.
      const frameId = frameOfRef(input.ref);
      await assertFrameReachable(tab.id!, frameId, input.ref, { undone: 'the text was not typed' });
      const p = await point(tab.id!, input, true, replace, true, ctx.signal);
      // Nor may the focus have gone on into such a frame (the page's own handlers move it).
      await assertFocusReachable(tab.id!, frameId, input.ref, 'the text was not typed');
      // Focus may have gone on into an iframe (the page's own handlers move it). After the typing:
      // undoes what the guard pinned, and refuses when the page took it off meanwhile.
      const keys = await assertKeysStayOut(tab.id!, await frameTarget(tab.id!, frameOfRef(input.ref), input.ref));
      const text = String(input.text);
      const keystrokes = input.keystrokes === true && text !== '';
      const total = [...text].length;
      // With keystrokes: characters sent so far, and whether the call is over (a dialog a key
      // opened ends it at once, and no key follows once that dialog is answered).
      let sent = 0;
      let over = false;
      // A key can make the page navigate (an autocomplete opening its result): no key of this text
      // reaches the next page.
      const leaving = keystrokes ? watchTopNavigation(tab.id!) : null;
      let r: Awaited<ReturnType<typeof runWatchingDialogs>> | undefined;
      try {
        ctx.signal.throwIfAborted(); // as for a click: no typing after the caller was told it failed
        r = await withDebugger(tab.id!, (tabSend) => runWatchingDialogs(tab.id!, tabSend, () => withFrameInput(tab.id!, tabSend, p.oopif ?? null, p, async (send) => {
          if (keystrokes) {
            // point() selected what the field holds: the first character typed replaces it.
            await typeKeys(send, text, (i) => {
              const unsent = i === 0 ? 'the text was not typed' : `${i} of ${total} characters were typed, the rest not`;
              if (over) throw new ToolError(`The typing stopped: ${unsent}`, { code: 'cancelled', category: 'internal' });
              ctx.signal.throwIfAborted();
              if (leaving!.left()) throw new ToolError(`Tab ${tab.id} started loading another page while the text was typed: ${unsent}`, { code: 'not_available', category: 'validation' });
              keys.beforeKey(unsent);
              sent = i + 1;
              if (i > 0 && i % 50 === 0) ctx.progress({ progress: i, total, message: 'typing' });
            }, () => {
              // Shift's keyup as for a key: not once the call is over or the page going, nor past the key guard.
              if (over || leaving!.left()) return false;
              try {
                keys.beforeKey('Shift was not let go');
                return true;
              } catch {
                return false;
              }
            });
          } else {
            // point() selected what the field holds: inserted text replaces the selection (one input
            // event, as when a person types over it); only an empty text needs a Backspace to delete it.
            keys.beforeKey(replace && text === '' ? 'the field was not cleared' : 'the text was not typed');
            if (replace && text === '') await pressKey(send, 'Backspace', 0);
            else await send('Input.insertText', { text });
          }
          if (input.submit === true) {
            if (keystrokes && over) return;
            keys.beforeKey('the text was typed, Enter was not pressed');
            await pressKey(send, 'Enter', 0);
          }
        })));
      } finally {
        over = true;
        leaving?.stop();
        // A dialog the typing opened blocks the page's scripts: the guard's pins are undone once it is answered.
        await keys.done(r?.dialog !== undefined);
      }
      const typed = keystrokes ? [...text].slice(0, sent).join('').length : text.length;
      return { value: { typed, tag: p.tag, replaced: replace, submitted: input.submit === true && !(keystrokes && r.dialog), ...(keystrokes ? { keystrokes: true } : {}), ...(r.dialog ? dialogNote(r.dialog) : {}) } };
    });
  },

  async browser_press_key(input, ctx) {
    assertNotPaste(String(input.key), modifierMask(input.modifiers));
    const tab = await ctx.tab(input.tabId);
    return oneInputAtATime(tab.id!, ctx.signal, async () => {
      // Keys go to an element in an iframe, or to the focus: not into a frame behind a modal dialog
      // of a page above it, which is out of a user's reach.
      const frameId = frameOfRef(input.ref);
      await assertFrameReachable(tab.id!, frameId, input.ref, { undone: 'the key was not pressed' });
      const p = input.selector !== undefined || input.ref !== undefined ? await point(tab.id!, input, true, false, false, ctx.signal) : null;
      await assertFocusReachable(tab.id!, frameId, input.ref, 'the key was not pressed');
      // Keys go to the focused element: not into an iframe showing a page the tools may not use.
      // After the key: undoes what the guard pinned for a shortcut, and refuses when the page changed it meanwhile.
      const keys = await assertKeysStayOut(tab.id!, await frameTarget(tab.id!, frameOfRef(input.ref), input.ref), modifierMask(input.modifiers));
      let r: Awaited<ReturnType<typeof runWatchingDialogs>> | undefined;
      try {
        ctx.signal.throwIfAborted(); // as for a click: no key press after the caller was told it failed
        r = await withDebugger(tab.id!, (send) =>
          runWatchingDialogs(tab.id!, send, () =>
            withFrameInput(tab.id!, send, p?.oopif ?? null, p ?? { x: 0, y: 0 }, (s) => {
              keys.beforeKey('the key was not pressed');
              return pressKey(s, String(input.key), modifierMask(input.modifiers));
            }),
          ),
        );
      } finally {
        // A dialog the key opened blocks the page's scripts: the guard's pins are undone once it is answered.
        await keys.done(r?.dialog !== undefined);
      }
      return { value: { pressed: input.key, ...(r.dialog ? dialogNote(r.dialog) : {}) } };
    });
  },

  async browser_hover_element(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    return oneInputAtATime(tab.id!, ctx.signal, async () => {
      // As for a click: a refused frame starting to load from here on gets no move.
      const loads = watchMouseLoads(tab.id!, 'the hover');
      try {
        await assertFrameReachable(tab.id!, frameOfRef(input.ref), input.ref, { undone: 'the mouse was not moved' });
        const p = await point(tab.id!, input, false, false, false, ctx.signal);
        const inFrame = frameOfRef(input.ref) !== 0;
        await assertMouseStaysOut(tab.id!, p.tag, inFrame ? undefined : p);
        // As for a click's press: a page moving a refused frame's iframe under the pointer between
        // the check and the move gets the move on what is under it (pinned pointer-events:none).
        const guard = await pressGuard(tab.id!, p, 'move', inFrame);
        let r: Awaited<ReturnType<typeof runWatchingDialogs>> | undefined;
        try {
          ctx.signal.throwIfAborted();
          await guard?.beforeInput();
          r = await withDebugger(tab.id!, (send) => runWatchingDialogs(tab.id!, send, () => withFrameInput(tab.id!, send, p.oopif ?? null, p, (s, at) => (loads.check(), moveMouse(s, { x: at.x, y: at.y })))));
        } finally {
          await guard?.afterPress(r?.dialog !== undefined);
        }
        return { value: { hovered: true, tag: p.tag, text: p.text, ...(r.dialog ? dialogNote(r.dialog) : {}) } };
      } finally {
        loads.stop();
      }
    });
  },

  async browser_select_option(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    if (input.value === undefined && input.label === undefined) throw new ToolError('Pass value or label', { code: 'invalid_arguments', category: 'validation' });
    const target = await frameTarget(tab.id!, frameOfRef(input.ref), input.ref);
    await assertFrameReachable(tab.id!, frameOfRef(input.ref), input.ref, { undone: 'no option was chosen' });
    // Not chosen once the caller was told the call failed (a busy page held the script up).
    const r = await runPage(target, 'selectInPage', [input.selector ?? null, input.ref ?? null, input.value ?? null, input.label ?? null], ctx.signal);
    pageError(r as { error?: string });
    return { value: r };
  },

  async browser_scroll(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    // Scrolling an iframe's element into view scrolls the pages above it too.
    const target = await frameTarget(tab.id!, frameOfRef(input.ref), input.ref);
    // No scroll once the caller was told the call failed (a busy page held the script up).
    const r = await runPage(target, 'scrollInPage', [
      input.selector ?? null,
      input.ref ?? null,
      input.direction ?? null,
      input.distance ?? 600,
      input.x ?? null,
      input.y ?? null,
    ], ctx.signal);
    pageError(r as { error?: string });
    return { value: r };
  },
} satisfies Partial<Handlers>;
