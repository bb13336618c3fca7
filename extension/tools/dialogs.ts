/**
 * JavaScript dialogs (alert, confirm, prompt, beforeunload). A dialog blocks its page, and the
 * DevTools input event that opened it does not complete until the dialog is closed, so a click
 * that opens one would hang. Debugger-driven actions watch for dialogs (Page domain events):
 * when one opens, the action returns at once saying so, and browser_handle_dialog accepts or
 * dismisses it (with a prompt's text).
 *
 * A dialog opened by a frame showing a page the tools may not use (another extension's frame, a
 * hidden file framed by a file:// page) is reported without its text or default answer: they are
 * that page's content. It can still be accepted or dismissed. A frame with no address of its own
 * (about:blank, about:srcdoc, data:) may have been written by such a page, so its dialog's text is
 * left out too while the tab holds a refused frame.
 */
import { ToolError } from '../shared/tool-error.ts';
import { debuggerEvents, onDebuggerGone } from './cdp-events.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { frameShowsRefusedPage } from './frame-policy.ts';
import { holdDebugger, type Held } from './held-debugger.ts';
import type { Handlers } from './types.ts';

export interface OpenDialog {
  /** 'unknown' for a dialog that opened before the tools watched the tab (`unseen`). */
  type: 'alert' | 'confirm' | 'prompt' | 'beforeunload' | 'unknown';
  /** Absent for a dialog of a refused frame (`refusedFrame`) and for an `unseen` one. */
  message?: string;
  defaultPrompt?: string;
  /** Opened by a frame showing a page the tools may not use: its text is left out. */
  refusedFrame?: true;
  /**
   * Opened before any debugger session of ours watched the tab (an alert() or confirm() while the
   * page loaded, before the agent first used the tab). DevTools tells a session only of dialogs
   * that open while it watches: such a dialog's type and text cannot be read, and
   * Page.handleJavaScriptDialog answers "No dialog is showing". Only the user can answer it; a
   * navigation of the tab dismisses it.
   */
  unseen?: true;
}

/** Said of a dialog the tools cannot answer (`unseen`): who can, and the way around it. */
const UNSEEN_WAY_OUT =
  'the tools cannot read or answer a dialog that opened before they watched the tab. Ask the user to answer it in the browser, ' +
  'or reload the tab (browser_reload_tab: that dismisses it, and a dialog the page opens again while loading comes back to be answered with browser_handle_dialog), ' +
  'or navigate it elsewhere (browser_navigate_tab) or close it';

const REFUSED_FRAME_TEXT = 'from a frame showing a page the tools may not use; its text is left out';

/** How a dialog is named to the agent: its type and text, or where it comes from when that is refused. */
const described = (d: OpenDialog) =>
  d.unseen
    ? 'dialog (opened by the page before the tools watched the tab, e.g. alert() or confirm() while it loaded; its text cannot be read)'
    : d.refusedFrame
      ? `${d.type} dialog (${REFUSED_FRAME_TEXT})`
      : `${d.type} dialog ("${(d.message ?? '').slice(0, 200)}")`;

/** A frame URL that names no page of its own: its content is its parent's or opener's doing. */
function addressless(url: string): boolean {
  return url === '' || url.startsWith('about:') || url.startsWith('data:') || url.startsWith('blob:null/');
}

/**
 * Whether a dialog opened by a frame showing `url` must leave its text out: the frame shows a
 * refused page, or it has no address of its own (or DevTools gave none) and the tab holds a frame
 * showing a refused page (which may have written it).
 */
async function fromRefusedFrame(tabId: number, url: string | undefined): Promise<boolean> {
  if (typeof url === 'string' && !addressless(url)) return frameShowsRefusedPage(url) !== null;
  // No address of its own (or none given): judged by the tab's frames.
  const frames = await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null);
  // Frames unknown: the text is left out rather than risked.
  if (!frames) return true;
  return frames.some((f) => frameShowsRefusedPage(f.url) !== null);
}

const open = new Map<number, OpenDialog>();
const watching = new Map<number, Set<(d: OpenDialog) => void>>();
const pageEnabled = new Set<number>();
/**
 * Sessions held while a dialog is open: the debugger stays on the tab (no idle detach) so its
 * Page events keep `open` true to the page until the dialog is answered, by a tool or the user.
 */
const heldForDialog = new Map<number, Held | 'pending'>();

function holdWhileOpen(tabId: number): void {
  if (heldForDialog.has(tabId)) return;
  heldForDialog.set(tabId, 'pending');
  holdDebugger(tabId, () => heldForDialog.delete(tabId)).then(
    (held) => {
      if (heldForDialog.get(tabId) === 'pending' && open.has(tabId)) heldForDialog.set(tabId, held);
      else {
        if (heldForDialog.get(tabId) === 'pending') heldForDialog.delete(tabId);
        held.release();
      }
    },
    () => heldForDialog.delete(tabId),
  );
}

function letGo(tabId: number): void {
  const held = heldForDialog.get(tabId);
  heldForDialog.delete(tabId);
  if (held && held !== 'pending') held.release();
}

/**
 * The next dialog a session of ours sees open in the tab (none when no session watches its
 * dialogs); `off` stops listening. Sends no DevTools command, so it never waits on a busy page.
 */
export function nextDialog(tabId: number): { opened: Promise<OpenDialog>; off: () => void } {
  let cb!: (d: OpenDialog) => void;
  const opened = new Promise<OpenDialog>((resolve) => (cb = resolve));
  let set = watching.get(tabId);
  if (!set) watching.set(tabId, (set = new Set()));
  set.add(cb);
  const mine = set;
  return {
    opened,
    off: () => {
      mine.delete(cb);
      if (mine.size === 0 && watching.get(tabId) === mine) watching.delete(tabId);
    },
  };
}

/** The dialog known to be open in the tab now (seen by a debugger session of ours). */
export function openDialog(tabId: number): OpenDialog | undefined {
  return open.get(tabId);
}

/**
 * A dialog blocks its page: scripts, screenshots and DevTools commands there wait until it is
 * answered, so a call would only end at its timeout. It is refused at once instead.
 */
export function dialogBlocksError(tabId: number, d: OpenDialog): ToolError {
  const next = d.unseen ? UNSEEN_WAY_OUT : 'answer it with browser_handle_dialog first';
  return new ToolError(`A ${described(d)} is open in tab ${tabId} and blocks its page: ${next}`, { code: 'not_available', category: 'validation', retryable: true });
}

/** Stop watching the tab's dialogs in this session (its Page.enable failed). */
const untrackers = new Map<number, () => void>();

function track(tabId: number): void {
  if (pageEnabled.has(tabId)) return;
  pageEnabled.add(tabId);
  // Events are handled in order: whether a dialog's frame is refused may take a look at the tab's frames.
  let chain = Promise.resolve();
  let live = true;
  const offEvents = debuggerEvents(tabId, (method, params) => {
    if (method === 'Page.javascriptDialogOpening') {
      const p = params as { type: OpenDialog['type']; message: string; defaultPrompt?: string; url?: string };
      chain = chain.then(async () => {
        const refused = await fromRefusedFrame(tabId, p.url);
        const d: OpenDialog = refused
          ? { type: p.type, refusedFrame: true }
          : { type: p.type, message: p.message, ...(p.type === 'prompt' ? { defaultPrompt: p.defaultPrompt ?? '' } : {}) };
        if (!live) return;
        open.set(tabId, d);
        holdWhileOpen(tabId);
        for (const cb of watching.get(tabId) ?? []) cb(d);
      });
    } else if (method === 'Page.javascriptDialogClosed') {
      chain = chain.then(() => {
        open.delete(tabId);
        letGo(tabId);
      });
    }
  });
  const stop = () => {
    if (!live) return;
    live = false;
    pageEnabled.delete(tabId);
    enabling.delete(tabId);
    untrackers.delete(tabId);
    offEvents();
    offGone();
  };
  untrackers.set(tabId, stop);
  const offGone = onDebuggerGone(tabId, () => {
    stop();
    open.delete(tabId);
    letGo(tabId);
  });
}

/**
 * How long Page.enable may take before the tab is looked at for a dialog nobody saw open. A page
 * whose main thread is blocked (by a dialog, or by its own busy script) answers it only once free.
 */
const PAGE_ENABLE_WAIT_MS = 1_500;
/** How long the browser may take to take an input event (it drops them at once while a dialog blocks the page). */
const INPUT_PROBE_WAIT_MS = 500;
/** After the probe was taken: a page that was only busy a moment has answered Page.enable by then. */
const PROBE_SETTLE_MS = 250;

/** Page.enable sent in the tab's session and not answered yet. */
const enabling = new Map<number, Promise<void>>();

/**
 * Watch the tab's dialogs in the current session: the events first, then Page.enable. The browser
 * reports dialogs from the moment the command reaches it, even while the page has not answered it.
 */
function startWatching(tabId: number, send: CdpSend): void {
  if (pageEnabled.has(tabId)) return;
  track(tabId);
  const p = send('Page.enable').then(() => {});
  enabling.set(tabId, p);
  const settled = () => {
    if (enabling.get(tabId) === p) enabling.delete(tabId);
    // The page answers again: a dialog that blocked it unseen is gone.
    if (open.get(tabId)?.unseen) {
      open.delete(tabId);
      letGo(tabId);
    }
  };
  p.then(settled, () => {
    settled();
    // Not watching after all: the next call enables the Page domain again.
    if (enabling.get(tabId) === undefined) untrackers.get(tabId)?.();
  });
}

/**
 * Whether the browser drops input to the tab: it does while a JavaScript dialog blocks the page,
 * and answers a dropped event at once; a page whose own script is busy takes input only once free
 * (the event is delivered then: a Shift key let go, which no page acts on).
 */
async function inputDropped(send: CdpSend): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const taken = send('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Shift', code: 'ShiftLeft', windowsVirtualKeyCode: 16 }).then(() => true, () => false);
  return Promise.race([taken, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), INPUT_PROBE_WAIT_MS)))]).finally(() => clearTimeout(timer));
}

/**
 * The tab's page as the dialog watch finds it: 'ready' (it answers; dialogs are watched),
 * 'dialog' (a dialog blocks it: one seen opening, or one that opened before the tools watched,
 * now known as `unseen`), or 'busy' (it does not answer yet; dialogs are watched all the same).
 * Throws what Page.enable failed with.
 */
async function pageState(tabId: number, send: CdpSend): Promise<'ready' | 'dialog' | 'busy'> {
  startWatching(tabId, send);
  if (open.has(tabId)) return 'dialog';
  const p = enabling.get(tabId);
  if (!p) return 'ready';
  const answered = (ms: number) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([p.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
  };
  if (await answered(PAGE_ENABLE_WAIT_MS)) return 'ready';
  if (open.has(tabId)) return 'dialog';
  if (!(await inputDropped(send))) return 'busy';
  // A page busy only a moment could have taken the probe as it came free: it answers Page.enable too.
  if (await answered(PROBE_SETTLE_MS)) return 'ready';
  if (!open.has(tabId)) {
    open.set(tabId, { type: 'unknown', unseen: true });
    holdWhileOpen(tabId);
  }
  return 'dialog';
}

/**
 * For a call whose page did not answer: throws dialogBlocksError when a dialog blocks the tab,
 * also one that opened before the tools watched it (the call would otherwise wait for its timeout
 * with nothing said of the dialog). Returns when no dialog is found (the page is busy) or the
 * debugger cannot be used on the tab.
 */
export async function throwIfDialogBlocks(tabId: number): Promise<void> {
  const known = open.get(tabId);
  if (known) throw dialogBlocksError(tabId, known);
  const state = await withDebugger(tabId, (send) => pageState(tabId, send)).catch(() => null);
  const d = open.get(tabId);
  if (state === 'dialog' && d) throw dialogBlocksError(tabId, d);
}

/**
 * Run a debugger-driven action; if a dialog opens meanwhile, resolve at once with it (the action's
 * own CDP commands finish once the dialog is handled). A dialog already blocking the page is
 * refused at once (dialogBlocksError), unless `leaves`: the action leaves the page.
 */
export async function runWatchingDialogs<T>(tabId: number, send: CdpSend, action: () => Promise<T>, opts: { leaves?: boolean } = {}): Promise<{ result?: T; dialog?: OpenDialog }> {
  const state = await pageState(tabId, send);
  // An action that leaves the page (navigation, reload) goes ahead on a blocked page: it
  // dismisses a dialog the tools could not answer, and the new page's dialogs are watched.
  if (!opts.leaves) {
    const d = open.get(tabId);
    if (state === 'dialog' && d) throw dialogBlocksError(tabId, d);
    // A busy page: the action waits for it, as its commands would.
    if (state === 'busy') await enabling.get(tabId);
  }
  let onDialog!: (d: OpenDialog) => void;
  const opened = new Promise<OpenDialog>((resolve) => (onDialog = resolve));
  let set = watching.get(tabId);
  if (!set) watching.set(tabId, (set = new Set()));
  set.add(onDialog);
  try {
    const actionDone = action().then((result) => ({ result }));
    // An action still pending when a dialog opened stays pending until the dialog is handled.
    actionDone.catch(() => {});
    return await Promise.race([actionDone, opened.then((dialog) => ({ dialog }))]);
  } finally {
    set.delete(onDialog);
    // No set kept per tab once nothing watches it (a tab id is never reused, so it would only pile up).
    if (set.size === 0 && watching.get(tabId) === set) watching.delete(tabId);
  }
}

/** What an action that opened a dialog answers, so the agent knows what to do next. */
export const dialogNote = (d: OpenDialog) => ({
  dialog: d,
  note: `The page opened a ${described(d)}; it blocks the page until answered: call browser_handle_dialog.`,
});

export const dialogTools = {
  async browser_handle_dialog(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const accept = input.action !== 'dismiss';
    const promptText = input.promptText;
    let known = open.get(tab.id!);
    try {
      await withDebugger(tab.id!, async (send) => {
        // A page that does not answer is looked at for a dialog the tools did not see open.
        await pageState(tab.id!, send);
        known = open.get(tab.id!);
        if (known?.unseen) throw new ToolError(`A ${described(known)} is open in tab ${tab.id}: ${UNSEEN_WAY_OUT}`, { code: 'not_available', category: 'validation' });
        await send('Page.handleJavaScriptDialog', { accept, ...(promptText !== undefined ? { promptText } : {}) });
      });
    } catch (err) {
      if (/no dialog/i.test((err as Error).message)) throw new ToolError(`No dialog is open in tab ${tab.id}`, { code: 'not_found', category: 'not_found' });
      throw err;
    }
    open.delete(tab.id!);
    letGo(tab.id!);
    return { value: { handled: true, action: accept ? 'accept' : 'dismiss', ...(known ? { dialog: known } : {}), ...(promptText !== undefined ? { promptText } : {}) } };
  },
} satisfies Partial<Handlers>;
