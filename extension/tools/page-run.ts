/**
 * Runs the page library's functions (extension/page/) in a tab's documents. chrome.scripting builds
 * the injected script's source from the function and its arguments, and V8 compiles it again
 * whenever that source differs: a large function called with new arguments each time (a new
 * selector, ref or text) was compiled on every call. So the library is injected once per document
 * (page-lib.js, into the ISOLATED world) and every call injects only `stub`, whose source is small.
 */
import type { PageLib } from '../page/index.ts';
import { ToolError } from '../shared/tool-error.ts';
import { refusalReason } from './url-policy.ts';
import { throwIfDialogBlocks } from './dialogs.ts';

export type { PageLib };
export type PageFn = keyof PageLib;

export type ScriptTarget = { tabId: number; documentIds?: string[] };

declare const __OPENTABS_PAGE_LIB_KEY__: string;

/** Where page-lib.js puts the library in the isolated world (set by the build; see extension/page/main.ts). */
export const PAGE_LIB_KEY: string = typeof __OPENTABS_PAGE_LIB_KEY__ === 'string' ? __OPENTABS_PAGE_LIB_KEY__ : '__opentabs_page_lib_unbuilt__';
export const PAGE_LIB_FILE = 'page-lib.js';

/**
 * How long after it was sent a page action may start. A page whose main thread is busy holds an
 * injected script and runs it once free, maybe after the call was given up (cancelled or timed
 * out) and the caller told it failed; a script that starts later than this does nothing and says
 * so, and the worker then checks the call's signal and sends the action again (the page has just
 * shown it runs scripts). A free page starts a script within a few milliseconds; the margin is for
 * a loaded machine (a late start costs one more round trip, nothing else).
 */
export const STALE_MS = 50;

/**
 * How many tries of an action carry a deadline. A page busy with only short gaps between its tasks
 * could make every try late; the try after these goes without one, as page actions went before
 * deadlines: sent once the page had answered and the call was found to stand.
 */
const STALE_RETRIES = 3;

/** What the stub answers: the function's result, or why it did not call it. */
type StubAnswer = { r?: unknown } | { missing: true } | { stale: true };

/**
 * The only function injected per call (serialized alone: it uses nothing from outside). Calls
 * `lib[name](...args)` of the library stored under `key`; says so when the document does not have
 * it, and does nothing when started after `notAfter` (a Date.now() of the worker).
 */
async function stub(key: string, name: string, args: unknown[], notAfter: number | null): Promise<StubAnswer> {
  const lib = (globalThis as unknown as Record<string, Record<string, (...a: unknown[]) => unknown> | undefined>)[key];
  if (!lib) return { missing: true };
  if (notAfter !== null && Date.now() > notAfter) return { stale: true };
  return { r: await lib[name]!(...args) };
}

/** Documents known to hold this build's library (by documentId), oldest first; bounded. */
const withLibrary = new Set<string>();
const WITH_LIBRARY_MAX = 512;
/** File injections under way, by documentId (calls at once into a new document share one). */
const injecting = new Map<string, Promise<void>>();

function remember(documentId: string | undefined): void {
  if (!documentId || withLibrary.has(documentId)) return;
  withLibrary.add(documentId);
  if (withLibrary.size > WITH_LIBRARY_MAX) withLibrary.delete(withLibrary.values().next().value!);
}

/** `early`: as soon as the document exists (at commit), not once it has loaded. */
async function injectLibrary(target: ScriptTarget, early = false): Promise<void> {
  const documentId = target.documentIds?.length === 1 ? target.documentIds[0] : undefined;
  const running = documentId ? injecting.get(documentId) : undefined;
  if (running) return running;
  const job = (async () => {
    const results = await chrome.scripting.executeScript({ target, world: 'ISOLATED', files: [PAGE_LIB_FILE], ...(early ? { injectImmediately: true } : {}) });
    for (const res of results) remember(res.documentId);
  })();
  if (!documentId) return job;
  injecting.set(documentId, job);
  try {
    await job;
  } finally {
    injecting.delete(documentId);
  }
}

/**
 * How long a script waits for its document to finish loading before it runs in the document as
 * parsed so far. chrome.scripting runs a script once the document is idle (parsed, or
 * DOMContentLoaded plus a moment), and a page whose response never ends (a stalled server, a
 * stream that is never closed) never gets there: every call on it waited for the server's
 * dispatch timeout and failed without a word about the page.
 */
export const LOADING_WAIT_MS = 3_000;

/** The page is still loading after LOADING_WAIT_MS: the call goes on in the document as it is. */
const STILL_LOADING: unique symbol = Symbol('still loading');

/**
 * The library into a document still loading, at once. Not through `injecting`: a file injection
 * already queued there waits for the document to be idle, which it may never be.
 */
async function injectNow(target: ScriptTarget): Promise<void> {
  const results = await chrome.scripting.executeScript({ target, world: 'ISOLATED', files: [PAGE_LIB_FILE], injectImmediately: true });
  for (const res of results) remember(res.documentId);
}

async function runStub(target: ScriptTarget, name: string, args: unknown[], notAfter: number | null, immediately: boolean): Promise<{ answer: StubAnswer | undefined; documentId?: string }> {
  const run = chrome.scripting.executeScript({ target, world: 'ISOLATED', func: stub, args: [PAGE_LIB_KEY, name, args, notAfter], ...(immediately ? { injectImmediately: true } : {}) });
  const [res] = immediately ? await untilAnswered(target, run) : await untilLoadedOrStuck(target, run);
  if (res && 'error' in res && res.error) throw new Error(String((res as { error: unknown }).error));
  return { answer: res?.result as StubAnswer | undefined, documentId: res?.documentId };
}

/**
 * Tabs the tools ran page code in lately (tab id → when), bounded. A document such a tab commits
 * next — the agent navigating, following a link, submitting a form — gets the library as it
 * commits, so the first call there (usually a snapshot right after a navigation) does not carry the
 * file. Tabs the tools never touched, and pages the URL policy refuses, get nothing.
 */
const recentTabs = new Map<number, number>();
const RECENT_TAB_MS = 10 * 60_000;
const RECENT_TABS_MAX = 64;
let preloading = false;

function noteTab(tabId: number): void {
  recentTabs.delete(tabId);
  recentTabs.set(tabId, performance.now());
  if (recentTabs.size > RECENT_TABS_MAX) recentTabs.delete(recentTabs.keys().next().value!);
  if (preloading) return;
  // Registered on first use, not at the worker's top level: a listener there would wake the
  // worker for every navigation in the browser.
  preloading = true;
  chrome.webNavigation.onCommitted.addListener((d) => {
    if (d.frameId !== 0 || !d.documentId) return;
    const at = recentTabs.get(d.tabId);
    if (at === undefined) return;
    if (performance.now() - at > RECENT_TAB_MS) {
      recentTabs.delete(d.tabId);
      return;
    }
    if (refusalReason(d.url)) return;
    injectLibrary({ tabId: d.tabId, documentIds: [d.documentId] }, true).catch(() => {});
  });
}

/** Tabs whose page was found still loading after LOADING_WAIT_MS, bounded. */
const stuckLoading = new Set<number>();
const STUCK_MAX = 64;

function noteStuck(tabId: number): void {
  stuckLoading.delete(tabId);
  stuckLoading.add(tabId);
  if (stuckLoading.size > STUCK_MAX) stuckLoading.delete(stuckLoading.values().next().value!);
}

/** How long the look at a document's readyState may take (a busy page does not answer). */
const READY_STATE_WAIT_MS = 1_000;

/**
 * The target document's readyState, read at once; null when the page did not answer within
 * READY_STATE_WAIT_MS (its main thread busy, a dialog open) or could not be read. Chrome's tab
 * status is no guide: it may say "complete" for a page whose response has not ended.
 */
async function readyState(target: ScriptTarget): Promise<string | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const look = chrome.scripting
    .executeScript({ target, world: 'ISOLATED', func: () => document.readyState, injectImmediately: true })
    .then(([res]) => (typeof res?.result === 'string' ? res.result : null), () => null);
  return Promise.race([look, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), READY_STATE_WAIT_MS)))]).finally(() => clearTimeout(timer));
}

const stillParsing = (state: string | null) => state === 'loading' || state === 'interactive';

const LATE = Symbol('late');

/** `run`'s result if it settles within `ms`, else LATE (`run` goes on; its later failure is not unhandled). */
async function answeredWithin<T>(run: Promise<T>, ms: number): Promise<T | typeof LATE> {
  run.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(() => resolve(LATE), ms)));
  try {
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The tab's page was found still loading, and still is: later calls do not wait again. */
async function stillStuck(target: ScriptTarget): Promise<boolean> {
  if (!stuckLoading.has(target.tabId)) return false;
  if (stillParsing(await readyState(target))) return true;
  stuckLoading.delete(target.tabId);
  return false;
}

/**
 * `run`'s results, or (thrown as STILL_LOADING) the news that its document has not finished
 * loading after LOADING_WAIT_MS. A page that does not answer is looked at for a dialog blocking it
 * (throwIfDialogBlocks: also one that opened before the tools watched the tab, e.g. alert() while
 * loading, which the call would otherwise wait on until its timeout); a busy one is waited for as
 * before: the call's signal ends that wait.
 */
async function untilLoadedOrStuck<T>(target: ScriptTarget, run: Promise<T>): Promise<T> {
  const first = await answeredWithin(run, LOADING_WAIT_MS);
  if (first !== LATE) return first;
  const state = await readyState(target);
  if (stillParsing(state)) throw STILL_LOADING;
  if (state === null) await throwIfDialogBlocks(target.tabId);
  return run;
}

/**
 * `run`'s results, from a document known to be still loading (scripts run in it at once). One
 * that has not answered after LOADING_WAIT_MS and does not answer a look either may be blocked
 * by a dialog: that is said at once (throwIfDialogBlocks); a busy page is waited for.
 */
async function untilAnswered<T>(target: ScriptTarget, run: Promise<T>): Promise<T> {
  const first = await answeredWithin(run, LOADING_WAIT_MS);
  if (first !== LATE) return first;
  if ((await readyState(target)) === null) await throwIfDialogBlocks(target.tabId);
  return run;
}

/**
 * `lib[name](...args)` in the target's document (ISOLATED world), injecting the library into a
 * document not known to hold it; the result, or undefined when Chrome ran the script nowhere.
 *
 * With `signal` the call is a page action: it does nothing once the call was given up while a busy
 * page held it (STALE_MS), and throws the signal's reason then.
 */
export async function runPage<K extends PageFn>(target: ScriptTarget, name: K, args: Parameters<PageLib[K]>, signal?: AbortSignal): Promise<Awaited<ReturnType<PageLib[K]>> | undefined> {
  noteTab(target.tabId);
  const known = target.documentIds?.length === 1 && withLibrary.has(target.documentIds[0]!);
  // A document new to the worker: the library is sent along with the call, not a round trip
  // before it. Chrome mostly runs the two in the order sent (measured: 7 of 10 new documents);
  // otherwise the call finds no library, does nothing, and goes again once the file is in.
  let sent: Promise<void> | null = target.documentIds?.length && !known ? injectLibrary(target) : null;
  sent?.catch(() => {});
  // Set once the document was found still loading after LOADING_WAIT_MS: scripts (the library's
  // file too) then run in it at once, as parsed so far.
  let immediately = await stillStuck(target);
  for (let attempt = 0, late = 0, injected = 0; attempt < 10; attempt++) {
    signal?.throwIfAborted();
    const notAfter = signal && late < STALE_RETRIES ? Date.now() + STALE_MS : null;
    const ran = await runStub(target, name, args as unknown[], notAfter, immediately).catch((err: unknown): typeof STILL_LOADING => {
      if (err === STILL_LOADING) return STILL_LOADING;
      throw err;
    });
    if (ran === STILL_LOADING) {
      // The copy still queued runs (if ever) once the page is idle: a page action's has its
      // deadline long past by then and does nothing; a reading's only reads.
      immediately = true;
      noteStuck(target.tabId);
      sent = null;
      attempt--;
      continue;
    }
    const { answer, documentId } = ran;
    if (!answer) return undefined;
    if ('missing' in answer) {
      if (sent) {
        await sent;
        sent = null;
        continue;
      }
      // Not there (a document the worker took for one with the library, or a target by tab):
      // inject it and call again, once.
      if (injected++) break;
      if (documentId) withLibrary.delete(documentId);
      if (immediately) await injectNow(target);
      else await injectLibrary(target);
      continue;
    }
    if ('stale' in answer) {
      late++;
      continue;
    }
    remember(documentId);
    return answer.r as Awaited<ReturnType<PageLib[K]>>;
  }
  throw new ToolError('The page did not take the extension\'s page script; try again', { code: 'not_available', category: 'internal', retryable: true });
}
