/**
 * Frames for the element tools: a browser_snapshot ref names its frame (`e12` the top document,
 * `f7e3` element e3 of frame 7, a chrome.webNavigation frameId), scripts for it are injected into
 * exactly that frame's document once the URL policy allows the frame and each frame above it, and
 * a point found in a frame is moved into the tab's viewport by the boxes of the iframes holding it
 * (the protocol's mouse events take viewport coordinates of the top page and reach the frame there;
 * a frame in a process of its own gets its input through its own DevTools session instead).
 */
import { ToolError } from '../shared/tool-error.ts';
import type { CdpSend } from './debugger.ts';
import { frameOfRef } from './frame-ref.ts';
import { markedObject, utilityWorld, type Described } from './element-node.ts';
import { framesDeep, iframeByKey } from '../page/frames.ts';
import { runPage, type PageFn, type PageLib, type ScriptTarget } from './page-run.ts';
import { checkedScriptTarget, redactedUrl } from './url-policy.ts';
import { frameRefusal } from './frame-policy.ts';

export type { ScriptTarget };

/** The frame's document as a script target, after the URL policy allowed it and every frame above it. */
export async function frameTarget(tabId: number, frameId: number, ref?: string | null): Promise<ScriptTarget> {
  if (frameId === 0) return checkedScriptTarget(tabId);
  const gone = () => new ToolError(`Unknown or stale ref ${ref ?? `in frame ${frameId}`}: its frame is gone; take a new browser_snapshot`, { code: 'not_found', category: 'not_found' });
  const frame = await chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null);
  if (!frame?.documentId) throw gone();
  let f: { url: string; parentFrameId: number } | null = frame;
  for (let i = 0; f && i < 32; i++) {
    const why = frameRefusal(f.url);
    if (why) throw new ToolError(`Tools may not use the frame ${redactedUrl(f.url)} in tab ${tabId}: ${why}`, { code: 'page_not_allowed', category: 'auth' });
    if (f.parentFrameId < 0) break;
    if (f.parentFrameId === 0) {
      await checkedScriptTarget(tabId);
      break;
    }
    f = await chrome.webNavigation.getFrame({ tabId, frameId: f.parentFrameId }).catch(() => null);
    if (!f) throw gone();
  }
  return { tabId, documentIds: [frame.documentId] };
}

/** How long a frame's answer is waited for (a cross-origin frame's page can be busy on its own). */
export const FRAME_ANSWER_MS = 5_000;
/** How deep iframes inside iframes are read. */
export const FRAME_LEVELS_MAX = 5;

export type FrameDetails = chrome.webNavigation.GetAllFrameResultDetails;
/** A frame inside the top document: how deep (1: an iframe of the top page), and why the URL policy refuses it or a frame above it (null: allowed). */
export type SubFrame = { frame: FrameDetails; depth: number; refused: string | null };

/**
 * The frames inside the tab's top document `topDocumentId`, parents before their children, at most
 * FRAME_LEVELS_MAX deep. A child is taken only when its parentDocumentId is the document its parent
 * frame shows now: had the tab (or a frame) navigated since the top document was read, another
 * page's iframes are not mixed in. Scripts go into a frame only when `refused` is null (the frame
 * and every frame above it allowed) and only by its documentId.
 */
export async function framesUnder(tabId: number, topDocumentId: string | undefined): Promise<SubFrame[]> {
  const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  const out: SubFrame[] = [];
  const visit = (parentFrameId: number, parentDocumentId: string | undefined, depth: number, refusedAbove: string | null) => {
    if (depth > FRAME_LEVELS_MAX) return;
    for (const f of all) {
      if (f.parentFrameId !== parentFrameId || f.frameId === 0) continue;
      if (parentDocumentId !== undefined && f.parentDocumentId !== parentDocumentId) continue;
      const refused = refusedAbove ?? frameRefusal(f.url);
      out.push({ frame: f, depth, refused });
      visit(f.frameId, f.documentId, depth + 1, refused);
    }
  };
  visit(0, topDocumentId, 1, null);
  return out;
}

/** The frames of `all` whose iframe is in the document `parentDocumentId` shown by frame `parentFrameId` (any document of it when undefined). */
export function childFrames(all: FrameDetails[], parentFrameId: number, parentDocumentId: string | undefined): FrameDetails[] {
  return all.filter((f) => f.frameId !== 0 && f.parentFrameId === parentFrameId && (parentDocumentId === undefined || f.parentDocumentId === parentDocumentId));
}

/** What a frame's document says of its own iframe in its parent (frameKeyInParent): -1 for what it cannot tell. */
export type FrameKeyed = { frameIndex: number; frameDeep: number };
/** An iframe of a document as that document lists it: its window.frames index, its position among all its iframes (framesDeep), its src. */
export type FrameSlot = { index: number; deep: number; src: string };

/**
 * Matches a document's iframes (`slots`, in the document's order; null for what is no iframe) to
 * Chrome's frames of that document (`children`), given what the frames that answered said
 * (`answers`, null for no answer). A frame is matched by its iframe's position among the
 * document's iframes, shadow roots' included (a frame of the document's origin reports its own),
 * else by its index among the window's frames (where Chrome leaves out iframes inside shadow
 * roots). A frame that says where its iframe is and matches no slot belongs to an iframe not
 * listed (hidden, or outside the part read). Of the rest (another origin's page inside a shadow
 * root says neither; a frame that did not answer, or was not asked, says nothing), an iframe left
 * without a frame gets one only by elimination: when it is the one iframe left and one such frame
 * is left, as frameKey places a frame for input. Never by the iframe's src, which a page can leave
 * naming another frame's page (a frame navigates without its src changing). For each slot: its
 * frame (if any) and that frame's answer (if it answered), or `unsure` when frames are left that
 * it cannot be told apart from.
 */
export function matchFrames<R extends FrameKeyed>(slots: (FrameSlot | null)[], children: FrameDetails[], answers: { frame: FrameDetails; r: R | null }[]): ({ frame?: FrameDetails; r?: R; unsure?: true } | null)[] {
  type Hit = { frame: FrameDetails; r: R };
  const byIndex = new Map<number, Hit>();
  const byDeep = new Map<number, Hit>();
  const answered = new Map<number, R>();
  /** Frames that said where their iframe is. */
  const located = new Set<number>();
  for (const a of answers) {
    if (!a.r) continue;
    answered.set(a.frame.frameId, a.r);
    if (a.r.frameIndex >= 0) byIndex.set(a.r.frameIndex, { frame: a.frame, r: a.r });
    if (a.r.frameDeep >= 0) byDeep.set(a.r.frameDeep, { frame: a.frame, r: a.r });
    if (a.r.frameIndex >= 0 || a.r.frameDeep >= 0) located.add(a.frame.frameId);
  }
  const hitOf = (s: FrameSlot) => (s.deep >= 0 ? byDeep.get(s.deep) : undefined) ?? (s.index >= 0 ? byIndex.get(s.index) : undefined);
  const hits = slots.map((s) => (s ? hitOf(s) : undefined));
  const matched = new Set(hits.flatMap((h) => (h ? [h.frame.frameId] : [])));
  const leftFrames = children.filter((f) => !matched.has(f.frameId) && !located.has(f.frameId));
  const leftSlots = slots.filter((s, i) => s && !hits[i]).length;
  return slots.map((s, i) => {
    if (!s) return null;
    const hit = hits[i];
    if (hit) return hit;
    if (leftSlots !== 1 || leftFrames.length !== 1) return leftFrames.length > 0 ? { unsure: true } : {};
    const frame = leftFrames[0]!;
    const r = answered.get(frame.frameId);
    return r ? { frame, r } : { frame };
  });
}

/** What a snapshot or a read says of an iframe whose frame matchFrames could not tell apart (`unsure`). */
export const UNSURE_FRAME_NOTE = "its frame cannot be told apart from the page's other iframes: another origin's page inside a shadow root";

/** One page-library call in a frame's document, given up (undefined) when the frame does not answer within FRAME_ANSWER_MS or the script fails there. */
export function runInFrame<K extends PageFn>(tabId: number, frame: FrameDetails, name: K, args: Parameters<PageLib[K]>, ms = FRAME_ANSWER_MS): Promise<Awaited<ReturnType<PageLib[K]>> | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    runIn({ tabId, documentIds: [frame.documentId] }, name, args).catch(() => undefined),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** One page-library call in one document; its result (undefined when Chrome ran it nowhere). */
export function runIn<K extends PageFn>(target: ScriptTarget, name: K, args: Parameters<PageLib[K]>): Promise<Awaited<ReturnType<PageLib[K]>> | undefined> {
  return runPage(target, name, args);
}

export interface FrameOffset {
  x: number;
  y: number;
  /** The part of the top viewport the frame shows (its iframes' boxes, clipped by each other). */
  clip: { left: number; top: number; right: number; bottom: number };
  /**
   * What a page above the frame draws at a point of the tab's viewport over the iframe holding
   * the frame (described), or null when the point reaches the frame.
   */
  coverAt(x: number, y: number): Promise<string | null>;
  /** The first frame on the way in a process of its own, if any (its input goes to its own session). */
  oopif: OutOfProcessFrame | null;
}

/**
 * How frame `frameId`'s parent (frame `parentFrameId`) names its iframe: [index among the parent's
 * window.frames, position in the parent's framesDeep]. The frame says so itself (frameKeyInParent)
 * unless it can tell neither: another origin's document in an iframe inside a shadow root (not in
 * window.frames, and its parent's document cannot be looked into from it). Then its iframe is the
 * one the parent's other frames leave: each of them says where its own iframe is, and exactly one
 * of the parent's iframes (frameSlots) is left over. Nothing weaker (an iframe's src, which a page
 * can leave pointing elsewhere once its frame navigated) may pick the iframe input is aimed at: a
 * frame that does not answer (a frame the URL policy refuses is never asked), or two iframes left
 * over, and the element cannot be reached.
 */
export async function frameKey(tabId: number, frameId: number, parentFrameId: number, ref?: string | null): Promise<[number, number]> {
  const own = (await runIn(await frameTarget(tabId, frameId, ref), 'frameKeyInParent', [])) ?? [-1, -1];
  if (own[0] >= 0 || own[1] >= 0) return own;
  const parent = await frameTarget(tabId, parentFrameId, ref);
  // An iframe in a closed shadow root is not among the iframes pages and tools look through, of
  // any origin: said as such, with what still works.
  const [closed] = await chrome.scripting.executeScript({ target: parent, world: 'ISOLATED', func: framesInClosedShadowRoots }).catch(() => [] as chrome.scripting.InjectionResult<number>[]);
  const where = typeof closed?.result === 'number' && closed.result > 0 ? 'an iframe inside a closed shadow root (a custom element that keeps its insides from scripts)' : "another origin's iframe inside a shadow root";
  const unsure = () =>
    new ToolError(
      `${ref ?? `Frame ${frameId}`} is in ${where}, which cannot be told apart from the page's other iframes (not all of them say where they are); clicks, typing and hovers cannot be aimed at it. browser_snapshot still reads it; browser_click_at at a point of browser_screenshot_tab reaches it as a person's click would`,
      { code: 'not_available', category: 'validation' },
    );
  const slots = (await runIn(parent, 'frameSlots', [])) ?? [];
  const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  const others = childFrames(all, parentFrameId, all.find((f) => f.frameId === parentFrameId)?.documentId).filter((f) => f.frameId !== frameId);
  const keys = await Promise.all(others.map((f) => (f.documentId && !frameRefusal(f.url) ? runInFrame(tabId, f, 'frameKeyInParent', []) : undefined)));
  const taken = new Set<number>();
  for (const key of keys) {
    const at = !key ? -1 : key[1] >= 0 ? slots.findIndex((s) => s.deep === key[1]) : key[0] >= 0 ? slots.findIndex((s) => s.index === key[0]) : -1;
    if (at < 0 || taken.has(at)) throw unsure();
    taken.add(at);
  }
  const left = slots.filter((_, i) => !taken.has(i));
  if (left.length !== 1) throw unsure();
  return [left[0]!.index, left[0]!.deep];
}

/** Runs in a document (ISOLATED world): how many frame-holding elements sit inside closed shadow roots (nested ones too). */
function framesInClosedShadowRoots(): number {
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  let n = 0;
  const walk = (root: Document | ShadowRoot, closed: boolean, depth: number) => {
    for (const el of root.querySelectorAll('*')) {
      if (closed && ['iframe', 'frame', 'object', 'embed'].includes(el.localName)) n++;
      const inner = el instanceof HTMLElement ? (dom?.openOrClosedShadowRoot?.(el) ?? null) : null;
      if (inner && depth < 32) walk(inner, closed || el.shadowRoot !== inner, depth + 1);
    }
  };
  walk(document, false, 0);
  return n;
}

/** The frames from the top document's first iframe down to frame `frameId`, and the top page's renderer process. */
async function frameChain(tabId: number, frameId: number): Promise<{ chain: { frameId: number; parentFrameId: number; processId: number }[]; topProcess: number | undefined }> {
  const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  const chain: { frameId: number; parentFrameId: number; processId: number }[] = [];
  for (let id = frameId, i = 0; id !== 0 && i < 32; i++) {
    const f = all.find((x) => x.frameId === id);
    if (!f) throw new ToolError(`Frame ${frameId} is gone; take a new browser_snapshot`, { code: 'not_found', category: 'not_found' });
    chain.unshift({ frameId: id, parentFrameId: f.parentFrameId, processId: f.processId });
    id = f.parentFrameId;
  }
  return { chain, topProcess: all.find((x) => x.frameId === 0)?.processId };
}

/**
 * Where frame `frameId`'s viewport starts in the tab's viewport, after scrolling each iframe
 * holding it into view in its parent. The top document: 0,0.
 */
export async function frameOffset(tabId: number, frameId: number): Promise<FrameOffset> {
  const { chain, topProcess } = await frameChain(tabId, frameId);
  let x = 0;
  let y = 0;
  let clip = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
  /** Each iframe on the way: its parent's document, its index there, and where that parent's viewport starts. */
  const levels: { parent: ScriptTarget; index: number; deep: number; origin: { x: number; y: number } }[] = [];
  let oopif: OutOfProcessFrame | null = null;
  for (const link of chain) {
    // How the parent names the frame's iframe: its window.frames index, or for an iframe inside a
    // shadow root (not in window.frames) its position among the parent's iframes (frameKey).
    const [index, deep] = await frameKey(tabId, link.frameId, link.parentFrameId);
    const parent = await frameTarget(tabId, link.parentFrameId);
    const box = await runIn(parent, 'iframeBox', [index, deep]);
    if (!box || 'error' in box) throw new ToolError(box?.error ?? 'The frame cannot be reached', { code: 'not_found', category: 'not_found' });
    if (link.parentFrameId === 0) clip = { left: 0, top: 0, right: box.viewport.width, bottom: box.viewport.height };
    levels.push({ parent, index, deep, origin: { x, y } });
    x += box.x;
    y += box.y;
    // The first frame on the way that runs in a process of its own: the mouse and keyboard events
    // for it and the frames it holds go to its own DevTools session.
    if (!oopif && link.processId !== topProcess) oopif = { frameId: link.frameId, parentInTopProcess: levels.length === 1 || chain[levels.length - 2]!.processId === topProcess, path: levels.map((l) => [l.index, l.deep]), origin: { x, y } };
    clip = { left: Math.max(clip.left, x), top: Math.max(clip.top, y), right: Math.min(clip.right, x + box.width), bottom: Math.min(clip.bottom, y + box.height) };
  }
  const coverAt = async (px: number, py: number) => {
    for (const l of levels) {
      const cover = await runIn(l.parent, 'coverOfFrame', [l.index, px - l.origin.x, py - l.origin.y, l.deep]);
      if (cover) return cover;
    }
    return null;
  };
  return { x, y, clip, coverAt, oopif };
}

/** A frame in another renderer process than the top page (a cross-site iframe under site isolation). */
export interface OutOfProcessFrame {
  frameId: number;
  /** Whether the iframe holding it is in the top page's process (then its DevTools frame is found there). */
  parentInTopProcess: boolean;
  /**
   * The iframes from the top document down to its own: each one's index among its parent's frames
   * (window.frames) and position among all the parent's iframes (frameKeyInParent).
   */
  path: [index: number, deep: number][];
  /** Where its viewport starts in the tab's viewport. */
  origin: { x: number; y: number };
}

/**
 * A DevTools expression, for a world of ours in the top document: the iframe element holding the
 * frame at `path` (OutOfProcessFrame.path), down the iframes from the top document, each found as
 * the frame tools find it in the page (iframeByKey, framesDeep in extension/page/frames.ts, sent as
 * their source: both use nothing from outside themselves); null when one is gone, false when a
 * document on the way is of another origin than its parent and cannot be looked into from there.
 */
function iframeLookup(path: [number, number][]): string {
  return `(() => {
    const framesDeep = ${framesDeep.toString()};
    const iframeByKey = ${iframeByKey.toString()};
    let win = window;
    let el = null;
    for (const [index, deep] of ${JSON.stringify(path)}) {
      let doc;
      try {
        doc = win.document;
      } catch {}
      if (!doc) return false;
      el = iframeByKey(framesDeep(doc), index, deep, win);
      if (!el) return null;
      win = el.contentWindow;
    }
    return el;
  })()`;
}

/**
 * The DevTools frame id (Page domain) of frame `frameId` of a tab, a frame in the top page's
 * process, found through its iframe element in a world of ours; a frame in a process of its own
 * (another site's) is refused: the tab's DevTools session does not hold its documents.
 */
export async function devtoolsFrameId(tabId: number, send: CdpSend, frameId: number, ref: string): Promise<string> {
  const { chain, topProcess } = await frameChain(tabId, frameId);
  if (chain.some((l) => l.processId !== topProcess)) {
    throw new ToolError(`${ref} is inside an iframe running in a process of its own (as another site's iframes do), which this tool cannot reach; it works on the top page and iframes of the page's site`, { code: 'invalid_arguments', category: 'validation' });
  }
  const path: [number, number][] = [];
  for (const link of chain) path.push(await frameKey(tabId, link.frameId, link.parentFrameId, ref));
  const found = await send<{ result: { type?: string; objectId?: string; subtype?: string } }>('Runtime.evaluate', { contextId: await utilityWorld(send), returnByValue: false, expression: iframeLookup(path) });
  if (!found.result.objectId || found.result.subtype === 'null') throw new ToolError(`The iframe of ${ref} is gone or cannot be looked into; take a new browser_snapshot`, { code: 'not_found', category: 'not_found' });
  const described = await send<{ node: { frameId?: string } }>('DOM.describeNode', { objectId: found.result.objectId });
  await send('Runtime.releaseObject', { objectId: found.result.objectId }).catch(() => {});
  if (!described.node.frameId) throw new ToolError(`The iframe of ${ref} holds no frame now; take a new browser_snapshot`, { code: 'not_found', category: 'not_found' });
  return described.node.frameId;
}

/**
 * For the DevTools-protocol tools: the element a frame ref (fFeN) names as a DevTools remote
 * object, marked in its frame's document and read back in a world of ours there (as
 * element-node.ts does in the top page); frames of another site are refused (devtoolsFrameId).
 */
export async function frameElementObject(tabId: number, send: CdpSend, selector: string | undefined, ref: string): Promise<{ el: Described; objectId: string }> {
  if (selector !== undefined) throw new ToolError('Pass either selector or ref, not both (they may name different elements)', { code: 'invalid_arguments', category: 'validation' });
  const frameId = frameOfRef(ref);
  const target = await frameTarget(tabId, frameId, ref);
  const devtoolsFrame = await devtoolsFrameId(tabId, send, frameId, ref);
  const mark = crypto.randomUUID();
  const r = await runIn(target, 'markInPage', [null, ref, mark]);
  if (!r) throw new ToolError(`The frame of ${ref} cannot be scripted`, { code: 'not_available', category: 'validation' });
  if ('error' in r) throw new ToolError(r.error, { code: r.validation ? 'invalid_arguments' : 'not_found', category: r.validation ? 'validation' : 'not_found' });
  return { el: r, objectId: await markedObject(send, mark, devtoolsFrame) };
}

/** How long to wait for Chrome to report the DevTools session of a frame's target. */
const FRAME_SESSION_WAIT_MS = 3_000;

/**
 * Input for a frame in a process of its own: Chrome hands the tab's mouse events to the frame
 * drawn at the point by hit testing, which does not always reach such a frame (in headless Chrome
 * the events went to the <iframe> element of the page above). The frame's own DevTools target
 * takes them in its own viewport's coordinates. `fn` gets a send whose Input.* commands go there
 * (the rest to the tab) and the point moved into that viewport; the child sessions are detached
 * afterwards.
 */
export async function withFrameInput<T>(tabId: number, send: CdpSend, frame: OutOfProcessFrame | null, at: { x: number; y: number }, fn: (send: CdpSend, at: { x: number; y: number }) => Promise<T>): Promise<T> {
  if (!frame) return fn(send, at);
  if (!frame.parentInTopProcess) {
    throw new ToolError('The element is in an iframe inside another site\'s iframe, which the input tools cannot reach', { code: 'not_available', category: 'validation' });
  }
  const sessions = new Map<string, string>();
  let onAttached: (() => void) | null = null;
  const listener = (source: chrome.debugger.DebuggerSession, method: string, params?: object) => {
    if (source.tabId !== tabId || source.sessionId || method !== 'Target.attachedToTarget') return;
    const p = params as { sessionId: string; targetInfo: { targetId: string } };
    sessions.set(p.targetInfo.targetId, p.sessionId);
    onAttached?.();
  };
  chrome.debugger.onEvent.addListener(listener);
  try {
    await send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
    // The iframe's DevTools frame id, read in a world of ours in the top page (its scripts cannot
    // stand in another iframe): that frame's target has it as its id.
    const contextId = await utilityWorld(send);
    const found = await send<{ result: { type?: string; objectId?: string; subtype?: string } }>('Runtime.evaluate', {
      contextId,
      returnByValue: false,
      expression: iframeLookup(frame.path),
    });
    if (found.result.type === 'boolean') throw new ToolError('The element is in an iframe inside an iframe of another origin, which the input tools cannot reach', { code: 'not_available', category: 'validation' });
    if (!found.result.objectId || found.result.subtype === 'null') throw new ToolError('The element\'s iframe went away; take a new browser_snapshot', { code: 'not_found', category: 'not_found' });
    const described = await send<{ node: { frameId?: string } }>('DOM.describeNode', { objectId: found.result.objectId });
    await send('Runtime.releaseObject', { objectId: found.result.objectId }).catch(() => {});
    const targetId = described.node.frameId;
    if (!targetId) throw new ToolError('The element\'s iframe holds no frame now; take a new browser_snapshot', { code: 'not_found', category: 'not_found' });
    if (!sessions.has(targetId)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FRAME_SESSION_WAIT_MS);
        onAttached = () => {
          if (sessions.has(targetId)) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
    }
    const sessionId = sessions.get(targetId);
    if (!sessionId) throw new ToolError('Chrome did not open the iframe\'s input session; try again', { code: 'not_available', category: 'internal', retryable: true });
    const frameSend: CdpSend = (method, params) =>
      method.startsWith('Input.') ? (chrome.debugger.sendCommand({ tabId, sessionId }, method, params) as Promise<never>) : send(method, params);
    return await fn(frameSend, { x: at.x - frame.origin.x, y: at.y - frame.origin.y });
  } finally {
    chrome.debugger.onEvent.removeListener(listener);
    await send('Target.setAutoAttach', { autoAttach: false, waitForDebuggerOnStart: false, flatten: true }).catch(() => {});
    for (const sessionId of sessions.values()) await send('Target.detachFromTarget', { sessionId }).catch(() => {});
  }
}
