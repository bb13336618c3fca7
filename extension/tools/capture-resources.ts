/**
 * Pictures a document paints that come from files the tools may not use. With file:// pages on,
 * a file:// page can show another file as a picture without a frame: <img>, <picture>/srcset,
 * <input type=image>, <video> and its poster, an image <object>/<embed>, SVG <image>/<feImage>/
 * <use>, CSS images (background, content, list-style, border-image, mask, on ::before/::after/
 * ::marker too), or a canvas it drew such a picture on. Only file:// documents (and about:blank/
 * srcdoc ones inside them) can load file:// pictures (Chrome refuses local resources to http(s)
 * pages), and other schemes' pictures are public by nature (other extensions' web-accessible
 * icons, data:, blob:), so the refused set for pictures is the refused set for pages
 * (refusalReason) among file:// URLs: the OpenTabs config folder, /proc and /dev, hidden files and
 * folders, MCP client configs by name.
 *
 * A screenshot or PDF is refused while a document of the tab loaded such a picture, checked before
 * and after the capture (checkedCapture), by two sources:
 *  - the resources each document of the tab loaded, as the DevTools protocol lists them
 *    (Page.getResourceTree): every picture the document fetched since it loaded, shown or not,
 *    dropped or drawn on a canvas; the page cannot take one out of that list, and it can show such
 *    a picture again from its memory at any moment (Chrome's resource timing, which a page reads
 *    and clears, lists no file:// loads at all). Scripts and style sheets of such files count too:
 *    they can write what they hold into the page;
 *  - its elements (in the extension's isolated world), for what the list may not hold: a
 *    <video>'s media. CSS pictures are in the list once used (reading every element's computed
 *    styles, pseudo-elements included, took a PDF of a 1,000-element page from about 0.3 s to 0.9 s).
 */
import { ToolError } from '../shared/tool-error.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { frameShowsRefusedPage } from './frame-policy.ts';
import { refusalReason, resolveFileUrls, urlPolicy } from './url-policy.ts';

/** file:// URLs one document sends back at most; a document with more is not captured. */
const MAX_URLS = 5_000;

/** A page whose main thread is busy longer than this is not captured (it cannot be checked). */
const CHECK_TIMEOUT_MS = 5_000;

/**
 * Runs in each frame (ISOLATED world): for a file:// document (or an about: one under it), the
 * file:// URLs of the pictures and media its elements name (more than `max`: `over`); null for
 * any other document.
 */
export function fileResources(max: number): { urls: string[]; over: boolean } | null {
  const fileDoc = location.protocol === 'file:' || (location.protocol === 'about:' && document.baseURI.startsWith('file:'));
  if (!fileDoc) return null;
  const urls = new Set<string>();
  let over = false;
  const add = (raw: string | null | undefined) => {
    if (!raw || over) return;
    let href: string;
    try {
      href = new URL(raw, document.baseURI).href;
    } catch {
      return;
    }
    if (!href.startsWith('file:')) return;
    urls.add(href);
    if (urls.size > max) over = true;
  };
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  const walk = (root: Document | ShadowRoot, depth: number) => {
    for (const el of root.querySelectorAll('*')) {
      if (over) return;
      if (el instanceof HTMLImageElement) {
        add(el.currentSrc);
        add(el.src);
      } else if (el instanceof HTMLInputElement) {
        if (el.type === 'image') add(el.src);
      } else if (el instanceof HTMLMediaElement) {
        add(el.currentSrc);
        add(el.src);
        if (el instanceof HTMLVideoElement) add(el.poster);
      } else if (el instanceof HTMLObjectElement) add(el.data);
      else if (el instanceof HTMLEmbedElement) add(el.src);
      else if (el instanceof HTMLSourceElement) {
        add(el.src);
        for (const part of el.srcset.split(',')) add(part.trim().split(/\s+/)[0]);
      } else if (el instanceof SVGElement) {
        add(el.getAttribute('href'));
        add(el.getAttributeNS('http://www.w3.org/1999/xlink', 'href'));
      }
      const shadow = (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
      if (shadow && depth < 32) walk(shadow, depth + 1);
    }
  };
  walk(document, 0);
  return { urls: over ? [] : [...urls], over };
}

interface FrameTree {
  frame: { url: string };
  resources?: { url: string; type?: string }[];
  childFrames?: FrameTree[];
}

/**
 * The file:// resources the documents of `tree` loaded, by URL: their type (Image, Script …).
 * Not those of a frame showing a refused page, nor below it: what they load paints only inside
 * that frame, which the frame checks of checkedCapture judge (a hidden one may stay).
 */
function treeFileUrls(tree: FrameTree | undefined, out: Map<string, string>, depth = 0): void {
  if (!tree || depth > 64) return;
  if (depth > 0 && frameShowsRefusedPage(tree.frame.url)) return;
  for (const r of tree.resources ?? []) if (r.url.startsWith('file:')) out.set(r.url, r.type ?? 'Other');
  for (const c of tree.childFrames ?? []) treeFileUrls(c, out, depth + 1);
}

/**
 * Throws (page_not_allowed) when a document of tab `tabId` loaded a resource from a file the tools
 * may not use, as the DevTools protocol lists what each document loaded (Page.getResourceTree; the
 * page cannot take one out of that list): a picture, or a script or style sheet, which puts what
 * the file holds into the page (a hidden `.env` of KEY="value" lines run as a script sets globals
 * the page reads; a style sheet's custom properties are read through getComputedStyle). `what`
 * names what is not taken ("screenshot"), or `tail` says what is not done; `send`, a debugger
 * session of the tab (else one is opened). Frames showing a refused page, and those inside them, are not looked at
 * (what they load stays inside them).
 */
export async function checkLoadedFiles(tabId: number, what: string, send: CdpSend | null, tail?: string, skip: ReadonlySet<string> = new Set()): Promise<void> {
  let tree: FrameTree | undefined;
  try {
    const get = (s: CdpSend) => s<{ frameTree: FrameTree }>('Page.getResourceTree');
    tree = (await (send ? get(send) : withDebugger(tabId, get))).frameTree;
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw new ToolError(`Could not read tab ${tabId} to check it before the ${what}: ${(err as Error)?.message ?? err}; try again once it has loaded`, { code: 'not_available', category: 'internal', retryable: true });
  }
  const loaded = new Map<string, string>();
  treeFileUrls(tree, loaded);
  // Judged by the file each leads to too (a visible link to a hidden picture): asked of the server first.
  await resolveFileUrls(loaded.keys()).catch(() => {});
  for (const [url, type] of loaded) {
    if (skip.has(type)) continue;
    const why = refusalReason(url);
    // Any type: a script or style sheet of such a file can put what it holds on the page too.
    if (why) throw pictureRefused(tabId, what, why, type === 'Image' ? 'a picture' : `a resource (${type.toLowerCase()})`, tail);
  }
}

/** Whether tab `tabId` may hold a document that loaded local files: file:// pages on, and a file:// frame in it. */
export async function mayLoadFiles(tabId: number): Promise<boolean> {
  if (!urlPolicy().allowFileUrls) return false;
  const frames = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  return frames.some((f) => f.url.startsWith('file:'));
}

function pictureRefused(tabId: number, what: string, why: string, kind = 'a picture', tail = `no ${what} is taken of it`): ToolError {
  return new ToolError(`Tab ${tabId} shows ${kind} from a file tools may not use (${why}); ${tail}`, { code: 'page_not_allowed', category: 'auth' });
}

/**
 * Refuses (page_not_allowed) a `what` ("screenshot", "PDF") of tab `tabId` while one of its
 * documents loaded or shows a picture from a file the tools may not use. Only with file:// pages
 * on and a file:// frame in the tab (no other document can load file:// pictures). A page that
 * cannot be read is not captured either (a retryable error).
 */
export async function refuseIfRefusedPictureShown(tabId: number, what: string): Promise<void> {
  if (!urlPolicy().allowFileUrls) return;
  const frames = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  if (!frames.some((f) => f.url.startsWith('file:'))) return;
  await checkLoadedFiles(tabId, what, null);
  // Frames showing a refused page and those inside them (judged by the frame checks, as above).
  const byId = new Map(frames.map((f) => [f.frameId, f]));
  const insideRefused = (frameId: number): boolean => {
    let f = byId.get(frameId);
    for (let i = 0; f && f.frameId !== 0 && i < 64; i++, f = byId.get(f.parentFrameId)) if (frameShowsRefusedPage(f.url)) return true;
    return false;
  };
  const unreadable = (err: unknown) =>
    new ToolError(`Could not read tab ${tabId} to check it before the ${what}: ${(err as Error)?.message ?? err}; try again once it has loaded`, { code: 'not_available', category: 'internal', retryable: true });
  let results: chrome.scripting.InjectionResult<{ urls: string[]; over: boolean } | null>[];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const busy = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`its page did not answer within ${CHECK_TIMEOUT_MS / 1000} s (busy?)`)), CHECK_TIMEOUT_MS);
    });
    results = await Promise.race([chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: 'ISOLATED', func: fileResources, args: [MAX_URLS] }), busy]);
  } catch (err) {
    throw unreadable(err);
  } finally {
    clearTimeout(timer);
  }
  await resolveFileUrls(results.flatMap((r) => r.result?.urls ?? [])).catch(() => {});
  for (const r of results) {
    const found = r.result;
    if (!found || insideRefused(r.frameId)) continue;
    if (found.over) throw new ToolError(`Tab ${tabId} shows more than ${MAX_URLS} pictures and media from local files, too many to check; no ${what} is taken of it`, { code: 'page_not_allowed', category: 'auth' });
    for (const url of found.urls) {
      const why = refusalReason(url);
      if (why) throw pictureRefused(tabId, what, why);
    }
  }
}

/**
 * Runs in a document (ISOLATED world): adds a Content-Security-Policy, once, under which the
 * document loads no script or style sheet from a local file (scripts and style sheets of the page
 * itself, inline or from http(s), blob: and data:, still run). A policy stays for the document's
 * life whatever the page does to the element, and documents it creates (about:blank and srcdoc
 * iframes, pop-ups) take it on. False when it could not be added (no head).
 */
export function closeLocalLoads(): boolean {
  const g = globalThis as unknown as { opentabsLocalLoadsClosed?: boolean };
  if (g.opentabsLocalLoadsClosed) return true;
  const head = document.head;
  if (!head) return false;
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = "script-src 'unsafe-inline' 'unsafe-eval' http: https: blob: data:; style-src 'unsafe-inline' http: https: blob: data:";
  head.prepend(meta);
  g.opentabsLocalLoadsClosed = true;
  return true;
}

/**
 * Before the agent's code runs in tab `tabId` (file:// pages on, a file:// frame in it): its top
 * document, and the about:blank and srcdoc frames in it (they may share its origin, and the code
 * can write into them), stop loading scripts and style sheets from local files (closeLocalLoads).
 * A file:// document can load any local file as a script or style sheet, putting what it holds
 * into the page (a hidden .env of KEY="value" lines sets globals, a style sheet's custom
 * properties are read through getComputedStyle), and code the agent runs there could have it do
 * so at any later moment, for other tools to read. Throws (page_not_allowed) when it cannot be done.
 */
export async function closeLocalLoadsOf(tabId: number, topDocumentId: string | undefined): Promise<void> {
  const frames = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  const documentIds = [topDocumentId, ...frames.filter((f) => f.frameId !== 0 && (f.url === 'about:blank' || f.url === 'about:srcdoc')).map((f) => f.documentId)];
  for (const documentId of documentIds) {
    const [r] = documentId ? await chrome.scripting.executeScript({ target: { tabId, documentIds: [documentId] }, world: 'ISOLATED', func: closeLocalLoads }).catch(() => [] as chrome.scripting.InjectionResult<boolean>[]) : [];
    if (r?.result !== true && documentId === topDocumentId) {
      throw new ToolError(`Tab ${tabId} is a local page whose loads of other local files could not be closed to scripts the agent runs; no script is run in it`, { code: 'page_not_allowed', category: 'auth' });
    }
  }
}
