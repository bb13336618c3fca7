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
import { frameShowsRefusedPage } from './frames.ts';
import { holdDebugger, type Held } from './held-debugger.ts';
import type { Handlers } from './types.ts';

export interface OpenDialog {
  type: 'alert' | 'confirm' | 'prompt' | 'beforeunload';
  /** Absent for a dialog of a refused frame (`refusedFrame`). */
  message?: string;
  defaultPrompt?: string;
  /** Opened by a frame showing a page the tools may not use: its text is left out. */
  refusedFrame?: true;
}

const REFUSED_FRAME_TEXT = 'from a frame showing a page the tools may not use; its text is left out';

/** How a dialog is named to the agent: its type and text, or where it comes from when that is refused. */
const described = (d: OpenDialog) => (d.refusedFrame ? `${d.type} dialog (${REFUSED_FRAME_TEXT})` : `${d.type} dialog ("${(d.message ?? '').slice(0, 200)}")`);

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
  return new ToolError(`A ${described(d)} is open in tab ${tabId} and blocks its page: answer it with browser_handle_dialog first`, { code: 'not_available', category: 'validation', retryable: true });
}

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
  const offGone = onDebuggerGone(tabId, () => {
    live = false;
    pageEnabled.delete(tabId);
    open.delete(tabId);
    letGo(tabId);
    offEvents();
    offGone();
  });
}

/**
 * Run a debugger-driven action; if a dialog opens meanwhile, resolve at once with it (the action's
 * own CDP commands finish once the dialog is handled).
 */
export async function runWatchingDialogs<T>(tabId: number, send: CdpSend, action: () => Promise<T>): Promise<{ result?: T; dialog?: OpenDialog }> {
  if (!pageEnabled.has(tabId)) {
    await send('Page.enable');
    track(tabId);
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
    const known = open.get(tab.id!);
    try {
      await withDebugger(tab.id!, async (send) => {
        if (!pageEnabled.has(tab.id!)) {
          await send('Page.enable');
          track(tab.id!);
        }
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
