/**
 * Images and PDFs of a page cannot go through the scrub every frame to the server goes through
 * (background/own-secret.ts): the secret in them is pixels or compressed text. A page that shows
 * the secret as text (a config file served by a local web server, a file:// page of a copy of
 * it) is therefore not shot or printed at all: before and after the capture, the text of every
 * frame of the tab (the document's text, form field values, shadow roots) is read in the
 * extension's isolated world and only its runs of hex digits come back; the secret itself never
 * goes into the page.
 */
import { holdsSecretPiece, knownSecret } from '../background/own-secret.ts';
import { ToolError } from '../shared/tool-error.ts';
import { refuseIfRefusedPictureShown } from './capture-resources.ts';
import { frameShowsRefusedPage } from './frame-policy.ts';
import { refusedFrameReaching, unpin } from './refused-frame-reach.ts';
import { redactedUrl, refusalReason } from './url-policy.ts';

/** Characters of text one frame sends back at most (runs of hex digits, or all of it for a secret that is not hex). */
const FRAME_TEXT_MAX_CHARS = 4_000_000;

/** A page whose main thread is busy longer than this is not captured (it cannot be checked). */
const CHECK_TIMEOUT_MS = 5_000;

/** Captures taken at most for one call when a pinned iframe's pin goes for a moment while one is taken. */
const CAPTURE_ATTEMPTS = 2;

/** Runs in each frame (ISOLATED world): its text's runs of 16+ hex digits, or all of its text when `whole`. */
function pageText(whole: boolean, maxChars: number): string {
  const parts: string[] = [];
  let chars = 0;
  const add = (s: string | null | undefined) => {
    if (!s || chars >= maxChars) return;
    const kept = whole ? [s] : (s.match(/[0-9a-fA-F]{16,}/g) ?? []);
    for (const k of kept) {
      if (chars >= maxChars) return;
      parts.push(k);
      chars += k.length + 1;
    }
  };
  const root = document.documentElement;
  if (!root) return '';
  add(root.textContent);
  // chrome.dom reaches closed shadow roots too (content scripts only).
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  for (const el of root.querySelectorAll('*')) {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      add(el.value);
      add(el.placeholder);
    }
    const shadow = (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
    if (shadow) add(shadow.textContent);
    if (chars >= maxChars) break;
  }
  return parts.join('\n');
}

/**
 * Refuses (page_not_allowed) when a frame of tab `tabId` shows a page the tools may not use
 * (frameShowsRefusedPage) and its iframe can paint into the capture (refusedFrameReaching: hidden
 * ones, such as other extensions' inline menus waiting to be used, cannot). With `pinToken`, the
 * iframes that cannot are pinned so until unpin; the documents pinned are returned.
 */
async function refuseIfRefusedFrameShown(tabId: number, what: string, pinToken?: string): Promise<string[]> {
  const r = await refusedFrameReaching(tabId, 'paint', pinToken);
  if (r.frame) {
    if (pinToken) await unpin(tabId, r.pinned, pinToken);
    throw refusedFrameError(tabId, what, r.frame.url, r.frame.why);
  }
  return r.pinned;
}

function refusedFrameError(tabId: number, what: string, url: string, why: string): ToolError {
  return new ToolError(`Tab ${tabId} shows ${redactedUrl(url) || 'a page'} in an iframe, which tools may not use (${why}); no ${what} is taken of it`, { code: 'page_not_allowed', category: 'auth' });
}

/**
 * A screenshot or PDF of tab `tabId`, taken by `capture` only while the page shows neither the
 * secret, nor a frame the tools may not use, nor a picture from a file they may not use
 * (capture-resources.ts): checked before and after the capture, and every frame
 * that starts loading or commits a refused page in between (a page can swap an iframe to a hidden
 * file and back while the image is taken) makes the capture fail; nothing of it is returned. A
 * refused frame whose iframe cannot paint (display:none, 0×0, visibility:hidden: other
 * extensions' inline menus until used) does not stop it; while the capture runs such iframes are
 * pinned that way, since a page can show them from CSS alone (@media print for a PDF, a media query
 * on the size the full-page shot lays it out at, an animation). Restyling them otherwise (moved,
 * display changed: what other extensions do with their menus as they are used) leaves the pin and
 * the capture alone; a page taking a pinned property off meanwhile, or moving such an iframe to
 * another parent (a shadow host's ::slotted rules beat the pin), has the image dropped: refused
 * when the frame can paint afterwards, else taken again once (then refused, retryable).
 */
export async function checkedCapture<T>(tabId: number, what: string, capture: () => Promise<T>): Promise<T> {
  let seen: ToolError | null = null;
  const onNav = (d: { tabId: number; frameId: number; url: string }) => {
    if (d.tabId !== tabId || seen) return;
    const why = d.frameId === 0 ? refusalReason(d.url) : frameShowsRefusedPage(d.url);
    if (why) seen = refusedFrameError(tabId, what, d.url, why);
  };
  chrome.webNavigation.onBeforeNavigate.addListener(onNav);
  chrome.webNavigation.onCommitted.addListener(onNav);
  let pins: { token: string; documents: string[] } | null = null;
  try {
    for (let attempt = 1; ; attempt++) {
      const token = crypto.randomUUID();
      pins = { token, documents: [] };
      pins.documents = await refuseIfRefusedFrameShown(tabId, what, token);
      await refuseIfPageShowsSecret(tabId, what);
      await refuseIfRefusedPictureShown(tabId, what);
      const result = await capture();
      if (seen) throw seen;
      const moved = await unpin(tabId, pins.documents, token);
      pins = null;
      // Again as it was captured: the page may have shown the secret or such a frame meanwhile; a
      // frame that can paint now is refused whatever happened to the pin.
      await refuseIfRefusedFrameShown(tabId, what);
      if (moved) {
        // The pin went for a moment and the frame is hidden again (another extension showing and
        // hiding its inline menu as it is used): the image may hold the frame and is dropped; it
        // is taken again, once.
        if (attempt < CAPTURE_ATTEMPTS) continue;
        throw new ToolError(
          `Tab ${tabId} changed the style of an iframe showing a page tools may not use, or moved it, while the ${what} was taken (${attempt} times); no ${what} is taken of it. Try again once the page has settled`,
          { code: 'page_not_allowed', category: 'auth', retryable: true },
        );
      }
      await refuseIfPageShowsSecret(tabId, what);
      await refuseIfRefusedPictureShown(tabId, what);
      if (seen) throw seen;
      return result;
    }
  } finally {
    chrome.webNavigation.onBeforeNavigate.removeListener(onNav);
    chrome.webNavigation.onCommitted.removeListener(onNav);
    if (pins?.documents.length) await unpin(tabId, pins.documents, pins.token).catch(() => true);
  }
}

/**
 * Refuses (page_not_allowed) when a frame of tab `tabId` shows the secret or a long piece of it;
 * `what` names the capture ("screenshot", "PDF"). A page that cannot be read is not captured
 * either (a retryable error). The text is read at once, as the page shows it now (what the
 * capture shows): a page still loading is never idle, and a check waiting for that never ran.
 */
export async function refuseIfPageShowsSecret(tabId: number, what: string): Promise<void> {
  const secret = knownSecret();
  if (secret === null) return;
  let results: chrome.scripting.InjectionResult<string>[];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const busy = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`its page did not answer within ${CHECK_TIMEOUT_MS / 1000} s (busy?)`)), CHECK_TIMEOUT_MS);
    });
    results = await Promise.race([chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: 'ISOLATED', func: pageText, args: [!/^[0-9a-f]+$/.test(secret), FRAME_TEXT_MAX_CHARS], injectImmediately: true }), busy]);
  } catch (err) {
    throw new ToolError(`Could not read tab ${tabId} to check it before the ${what}: ${(err as Error)?.message ?? err}; try again once it has loaded`, { code: 'not_available', category: 'internal', retryable: true });
  } finally {
    clearTimeout(timer);
  }
  for (const r of results) {
    if (typeof r.result === 'string' && holdsSecretPiece(r.result)) {
      throw new ToolError(`Tab ${tabId} shows the OpenTabs secret (or a piece of it); no ${what} is taken of it`, { code: 'page_not_allowed', category: 'auth' });
    }
  }
}
