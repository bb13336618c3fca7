/**
 * Screenshots and PDFs without other extensions' own controls drawn in the page: a password
 * manager's menu under a closed shadow root the page's own code did not attach (the rule
 * of extension/page/dom.ts, foreignUiHost) showed the user's accounts and one-time codes in the
 * picture, although the snapshot leaves it out and input into it is refused. While a capture is
 * taken every such host in the tab's top document and the frames the tools may use is pinned
 * hidden (extension/page/foreign-ui.ts); a change to them meanwhile drops the image, which is
 * taken again once, as for refused frames' pins (secret-on-page.ts).
 */
import { ToolError } from '../shared/tool-error.ts';
import { framesUnder, runInFrame, type FrameDetails } from './frames.ts';
import { refusalReason } from './url-policy.ts';

/** Captures taken at most for one call when the page or the extension changes its controls while one is taken. */
const CAPTURE_ATTEMPTS = 2;

/** The tab's top document and the frames the tools may use, by document. */
async function documentsOf(tabId: number): Promise<FrameDetails[]> {
  const top = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
  if (!top?.documentId || refusalReason(top.url)) return [];
  const frames = await framesUnder(tabId, top.documentId);
  return [{ ...top, frameId: 0 } as FrameDetails, ...frames.filter((f) => !f.refused && f.frame.documentId).map((f) => f.frame)];
}

function notHidden(tabId: number, what: string, why: string): ToolError {
  return new ToolError(`Tab ${tabId} ${why}; no ${what} is taken of it`, { code: 'page_not_allowed', category: 'auth', retryable: true });
}

/**
 * `capture` of tab `tabId` (`what`: "screenshot", "PDF") taken with other extensions' own
 * controls hidden in the top document and each frame the tools may use that answers. Refused when
 * the top document cannot be looked at, when such controls stay drawn (their own !important rules),
 * or when they changed during both attempts (retryable).
 */
export async function captureHidingForeignUi<T>(tabId: number, what: string, capture: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const token = crypto.randomUUID();
    const docs = await documentsOf(tabId);
    const answers = await Promise.all(docs.map((d) => runInFrame(tabId, d, 'hideForeignUi', [token])));
    const pinned = docs.filter((_, i) => answers[i] !== undefined);
    let result: T | undefined;
    let failure: unknown = null;
    try {
      if (docs[0]?.frameId !== 0 || answers[0] === undefined) throw notHidden(tabId, what, 'could not be looked at for other extensions\' controls drawn in it (busy, or it navigated); try again');
      for (const a of answers) {
        if (a && 'tooLarge' in a) throw notHidden(tabId, what, 'has too many elements to look for other extensions\' controls drawn in it');
        if (a && 'drawn' in a) throw notHidden(tabId, what, `shows <${a.drawn}>, another extension's own controls drawn in the page (a closed shadow root the page's own code did not attach), which could not be hidden for the ${what}; close it (press Escape or click elsewhere in the page), then try again`);
      }
      result = await capture();
    } catch (err) {
      failure = err;
    }
    // Undone whatever happened; a document that cannot say (it was replaced) counts as a change.
    const shown = await Promise.all(pinned.map((d) => runInFrame(tabId, d, 'showForeignUi', [token])));
    if (failure !== null) throw failure;
    const changed = shown.some((s, i) => (s ? s.changed : pinned[i]!.frameId === 0));
    if (!changed) return result as T;
    if (attempt >= CAPTURE_ATTEMPTS) {
      throw notHidden(tabId, what, `changed another extension's own controls drawn in the page while the ${what} was taken (${attempt} times)`);
    }
  }
}
