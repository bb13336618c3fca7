/**
 * A frame is behind what its iframe is behind: a modal dialog open in a page above it (a <dialog>
 * shown modally, or a shown aria-modal one) leaves everything outside that dialog, the iframes
 * there and their content included, out of a user's reach, as does [inert] around the iframe.
 * Every tool that puts input into a frame (fill, type, keys, click, hover, drag, select, upload)
 * refuses it then, by the page's own rule (unreachable in extension/page/dom.ts), asked of each
 * document above the frame; keys sent to the focus likewise, when the focus is in such a frame.
 */
import { ToolError } from '../shared/tool-error.ts';
import { frameRefusal } from './frame-policy.ts';
import { childFrames, frameKey, frameTarget, runIn, runInFrame } from './frames.ts';

/** How far frames inside frames are followed, up or down. */
const LEVELS_MAX = 32;

/** Where a blocked iframe sits, as messages say it after "in an iframe <why> ". */
const holder = (parentFrameId: number) => (parentFrameId === 0 ? 'the page' : 'the frame holding it');

/**
 * Why a user cannot reach what frame `frameId` of tab `tabId` holds now: the words of the first
 * page above it (nearest first) whose iframe leading to it is behind that page's open modal dialog
 * or in [inert], with which page it is; null when each one's iframe is reachable (and for the top
 * document, frame 0).
 */
export async function frameBlocked(tabId: number, frameId: number, ref?: string | null): Promise<string | null> {
  for (let id = frameId, i = 0; id !== 0 && i < LEVELS_MAX; i++) {
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId: id }).catch(() => null);
    if (!frame) return null;
    const parentId = frame.parentFrameId;
    if (parentId < 0) return null;
    const parent = await frameTarget(tabId, parentId, ref);
    const blocked = (await runIn(parent, 'unreachableFrames', [])) ?? [];
    if (blocked.length > 0) {
      // Only then is it worth finding which of the parent's iframes this frame's is.
      const [index, deep] = await frameKey(tabId, id, parentId, ref);
      const hit = blocked.find((b) => (deep >= 0 && b.deep === deep) || (deep < 0 && index >= 0 && b.index === index));
      if (hit) return `in an iframe ${hit.why} of ${holder(parentId)}`;
    }
    id = parentId;
  }
  return null;
}

/** What the refusals advise: the dialog is where a user can act. */
const ACT_IN_DIALOG = 'Act in the dialog, or close it first (its close or cancel button with browser_click_element)';

/**
 * Refuses (invalid_arguments) input aimed at `ref` when it names an element of a frame a user
 * cannot reach now (frameBlocked); a ref of the top page, or none, passes. The message reads
 * "<subject> is in an iframe …, which a user cannot reach until it is closed: <undone>. <next>".
 */
export async function assertFrameReachable(tabId: number, frameId: number, ref: string | null | undefined, says: { subject?: string; undone: string; next?: string }): Promise<void> {
  if (frameId === 0) return;
  const behind = await frameBlocked(tabId, frameId, ref);
  if (behind) throw unreachableError(says.subject ?? `The element ${ref}`, behind, says.undone, says.next);
}

function unreachableError(subject: string, behind: string, undone: string, next = ACT_IN_DIALOG): ToolError {
  return new ToolError(`${subject} is ${behind}, which a user cannot reach until it is closed: ${undone}. ${next}`, { code: 'invalid_arguments', category: 'validation' });
}

/**
 * Why keys sent now from document `frameId` (0: the top page) on would land in a frame a user
 * cannot reach: following the focus down, a document whose focused element is an iframe behind
 * its open modal dialog or in [inert] (focusedFrame in extension/page/frames.ts), in the words of
 * frameBlocked; null when the focus stays in a reachable document. A frame the tools may not use,
 * or one whose iframe cannot be told apart, ends the walk: the key guard judges those.
 */
export async function focusBlocked(tabId: number, frameId: number, ref?: string | null): Promise<string | null> {
  let id = frameId;
  let target = await frameTarget(tabId, frameId, ref);
  for (let i = 0; i < LEVELS_MAX; i++) {
    // A document that cannot be scripted (Chrome refuses it) ends the walk too: the key guard judges it.
    const focused = await runIn(target, 'focusedFrame', []).catch(() => undefined);
    if (!focused) return null;
    if (focused.why) return `in an iframe ${focused.why} of ${holder(id)}`;
    const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
    const children = childFrames(all, id, target.documentIds?.[0]).filter((c) => c.documentId && !frameRefusal(c.url));
    let next: (typeof children)[number] | undefined;
    for (const c of children) {
      const key = await runInFrame(tabId, c, 'frameKeyInParent', []);
      if (key && ((focused.index >= 0 && key[0] === focused.index) || (focused.deep >= 0 && key[1] === focused.deep))) {
        next = c;
        break;
      }
    }
    if (!next) return null;
    id = next.frameId;
    target = { tabId, documentIds: [next.documentId] };
  }
  return null;
}

/** Refuses (invalid_arguments) keys sent from document `frameId` on while the focus is in a frame a user cannot reach (focusBlocked). */
export async function assertFocusReachable(tabId: number, frameId: number, ref: string | null | undefined, undone: string): Promise<void> {
  const behind = await focusBlocked(tabId, frameId, ref);
  if (behind) throw unreachableError(`The focus in tab ${tabId}`, behind, undone);
}
