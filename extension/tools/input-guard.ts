/**
 * Trusted input (the DevTools protocol's mouse and key events) goes where Chrome sends a person's:
 * a click to whatever frame is drawn at the point, keys to whichever frame has focus. A page the
 * tools may use can hold, in an iframe, a page they may not (a file:// page framing
 * ~/.ssh/id_rsa, another extension's page in a site): a click at the iframe's place reached that
 * frame, and keys followed it there (Ctrl+A and Ctrl+C in the framed file, then Ctrl+V in a field
 * of the page, copied a hidden file into text the agent reads). So while a frame of the tab shows
 * a page the tools may not use (frameShowsRefusedPage), mouse input aimed at a frame-holding element
 * and key input while such an element has focus are refused, and shortcut keys while such a frame
 * can take focus at all.
 */
import { CLOSED_ROOTS_TYPE_KEY } from '../page/closed-roots.ts';
import { ToolError } from '../shared/tool-error.ts';
import { runInFrame, type ScriptTarget } from './frames.ts';
import { frameShowsRefusedPage } from './frame-policy.ts';
import { pinnedAtPoint, pinsGone, refusedFrameReaching, unpin } from './refused-frame-reach.ts';
import { checkedScriptTarget, redactedUrl } from './url-policy.ts';

/** Elements that hold a frame: input at them goes into that frame. */
const FRAME_TAGS: ReadonlySet<string> = new Set(['iframe', 'frame', 'object', 'embed', 'fencedframe', 'portal']);

/** A frame of tab `tabId` showing a page the tools may not use, or null. */
export async function refusedFrameOf(tabId: number): Promise<{ url: string; why: string } | null> {
  const frames = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  for (const f of frames) {
    if (f.frameId === 0) continue; // the tab's own page: the call's guard checked it
    const why = frameShowsRefusedPage(f.url);
    if (why) return { url: f.url, why };
  }
  return null;
}

function refused(tabId: number, f: { url: string; why: string }, what: string): ToolError {
  return new ToolError(
    `Tab ${tabId} shows ${redactedUrl(f.url) || 'a page'} in an iframe, which tools may not use (${f.why}); ${what} could reach that frame, so it was not sent. Input to the page's other elements still works`,
    { code: 'page_not_allowed', category: 'auth' },
  );
}

/**
 * Runs in the top document (ISOLATED world): the tag of the element drawn at viewport point
 * (x, y), looking into shadow roots, closed ones too (document.elementFromPoint stops at the
 * host: an iframe inside a custom element's closed shadow root is found as that element).
 */
function deepTagAt(x: number, y: number): string {
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  let el: Element | null = document.elementFromPoint(x, y);
  for (let i = 0; el && i < 32; i++) {
    const root = (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
    const inner = root ? root.elementFromPoint(x, y) : null;
    if (!inner || inner === el) break;
    el = inner;
  }
  return el ? el.tagName.toLowerCase() : '';
}

/**
 * Refuses (page_not_allowed) a mouse event while the tab shows a refused page in a frame that can
 * be hit, when it is aimed at an element holding a frame: `tag`, the element the tool found, or,
 * for a point of the top document (`at`, viewport CSS pixels), what is drawn there, inside shadow
 * roots too.
 */
export async function assertMouseStaysOut(tabId: number, tag: string | null | undefined, at?: { x: number; y: number }): Promise<void> {
  const f = await refusedFrameOf(tabId);
  if (!f) return;
  let what: string | null = null;
  if (tag && FRAME_TAGS.has(tag.toLowerCase())) what = 'a mouse event at that iframe';
  else if (at) {
    const [r] = await chrome.scripting.executeScript({ target: await checkedScriptTarget(tabId), world: 'ISOLATED', func: deepTagAt, args: [at.x, at.y], injectImmediately: true }).catch(() => [] as chrome.scripting.InjectionResult<string>[]);
    // Unknown: counts as an iframe, the event is not sent.
    if (typeof r?.result !== 'string' || FRAME_TAGS.has(r.result)) what = 'a mouse event at that point, where an iframe is drawn,';
  }
  if (!what) return;
  // At an iframe: one of the page's own or a site's (a video, a payment form) is fine while no
  // refused frame can be hit, which takes a box with an area, not visibility:hidden (the same as
  // painting: refusedFrameReaching). A page moving one under the pointer before the press is met
  // by pressGuard, as one moving it over any other element.
  const reach = await refusedFrameReaching(tabId, 'paint');
  if (reach.frame) throw refused(tabId, reach.frame, what);
}

/** Top documents (tab id, document id) that took the pin off a refused frame's iframe while a click was pressed: no more clicks there. */
const clicksOff = new Set<string>();

export interface PressGuard {
  /**
   * Runs before the gesture's first event (a click's move, a hover's, a drag's, the first of
   * browser_move_mouse's steps): checks the point and pins; throws to send nothing.
   */
  beforeInput: () => Promise<void>;
  /**
   * For a click: runs once the page has the mouse move, right before the press: the point again,
   * and whether the pins held; throws to send no press.
   */
  beforePress: () => Promise<void>;
  /**
   * Runs once the press and release were sent (also when they failed). With `dialog` (the input
   * opened one, which blocks the page's scripts until it is answered) the pins are undone once the
   * page runs again, and a page that took one off gets no more clicks from then on.
   */
  afterPress: (dialog?: boolean) => Promise<void>;
}

/**
 * For a click (`kind` 'press'; a drag likewise) or mouse moves (`kind` 'move': a hover, or
 * browser_move_mouse's steps, which pass over whatever lies between two points) at top-document
 * point `at` while the tab shows a refused page in a frame. beforeInput runs before the gesture's
 * first event (a click's move too) and afterPress after the last, so no event of the call reaches
 * such a frame, whether the page moves it under the pointer or the moves cross it: from right after
 * the point is checked until the last event was sent every iframe of such a frame is pinned
 * pointer-events:none (an inline !important style, which page stylesheets and animations cannot
 * override; an event at it goes to what is under it). A click's point is checked again once the
 * page has the move (acting.ts click's beforePress), since a page's mousemove handler can move a
 * frame under the pointer, where a person's click would go into it (refused, pinned or not). A page that takes the pin off, or moves such
 * an iframe to another parent (into a shadow host, whose ::slotted !important rules beat the pin),
 * before the press gets none; one doing it meanwhile may have had the input go into the frame: the
 * call fails and no more clicks are sent in that page. A shadow host's child, which ::slotted
 * rules may restyle whatever its inline style says, is pinned inert as well (hit testing passes an
 * inert element by). With `inFrame`, `at` is the
 * tab's point of an element of an allowed iframe, already checked against what covers that iframe:
 * only the pins are added (a page moving a refused frame over that iframe meanwhile gets the
 * events on what is under it). Undefined when no such frame is in the tab (the click goes in one
 * round trip).
 */
export async function pressGuard(tabId: number, at: { x: number; y: number } | undefined, kind: 'press' | 'move' = 'press', inFrame = false): Promise<PressGuard | undefined> {
  const f = at ? await refusedFrameOf(tabId) : null;
  if (!at || !f) return undefined;
  const token = crypto.randomUUID();
  let pinned: string[] = [];
  let top: string | undefined;
  let page = '';
  let done = false;
  const pinsOff = (sent: string) =>
    new ToolError(
      `Tab ${tabId} took the pointer-events pin off an iframe showing a page tools may not use (${redactedUrl(f.url) || 'a page'}), or moved that iframe, ${sent}`,
      { code: 'page_not_allowed', category: 'auth' },
    );
  const afterPress = async (dialog = false) => {
    if (done) return;
    done = true;
    if (dialog) {
      void unpin(tabId, pinned, token, false).then((moved) => moved && clicksOff.add(page), () => {});
      return;
    }
    if (await unpin(tabId, pinned, token, false)) {
      clicksOff.add(page);
      throw pinsOff(`while the mouse ${kind === 'move' ? 'moved' : 'button was down'}; the mouse input may have reached that frame, and clicks are refused in this page from now on`);
    }
  };
  /** Runs `step`; when it throws, no further event is sent and the pins go, whatever the page did to them. */
  const orUnpin = async (step: () => Promise<void>) => {
    try {
      await step();
    } catch (err) {
      done = true;
      await unpin(tabId, pinned, token, false).catch(() => true);
      throw err;
    }
  };
  const beforeInput = () =>
    orUnpin(async () => {
      // The point first (pinned, a frame there would let the event through to what is under it,
      // where a person's click would go into the frame: such a click is refused), then the pins.
      // A point of an iframe's element was checked against what covers that iframe (frameOffset).
      if (!inFrame) await assertMouseStaysOut(tabId, null, at);
      const r = await refusedFrameReaching(tabId, 'hit', token);
      pinned = r.pinned;
      top = r.topDocumentId;
      page = `${tabId}:${r.topDocumentId ?? ''}`;
      if (clicksOff.has(page)) throw refused(tabId, r.frame ?? f, kind === 'move' ? 'a mouse move' : 'a click');
      // A page sees the pin as it is written and may undo it at once (a shadow root's ::slotted rule).
      if (await pinsGone(tabId, pinned, token)) throw pinsOff('as it was pinned; no mouse event was sent');
    });
  const beforePress = () =>
    orUnpin(async () => {
      if (!inFrame) {
        await assertMouseStaysOut(tabId, null, at);
        // A pinned iframe the page moved under the pointer is passed by hit testing (the press
        // would go to what is under it), where a person's click would go into its frame: refused.
        if (await pinnedAtPoint(tabId, top, pinned, token, at)) throw refused(tabId, f, 'a click at that point, where the page has put such an iframe,');
      }
      if (await pinsGone(tabId, pinned, token)) {
        clicksOff.add(page);
        throw pinsOff('after the mouse move; the move may have reached that frame, no press was sent, and clicks are refused in this page from now on');
      }
    });
  return { beforeInput, beforePress, afterPress };
}

/** Runs in the document keys would go to (ISOLATED world): the tag of its focused element, inside shadow roots too. */
function focusedTag(): string {
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  let el: Element | null = document.activeElement;
  for (let i = 0; el && i < 32; i++) {
    const root = (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
    const inner = root?.activeElement ?? null;
    if (!inner || inner === el) break;
    el = inner;
  }
  return el ? el.tagName.toLowerCase() : '';
}

/**
 * Runs in a document (ISOLATED world): whether its focused element, inside shadow roots too, is the
 * iframe of the child frame that names itself [`index` among window.frames, `deep` among the
 * document's iframes in tree order, open shadow roots' included] (frameKeyInParent).
 */
function focusIsFrame(index: number, deep: number): boolean {
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  let el: Element | null = document.activeElement;
  for (let i = 0; el && i < 32; i++) {
    const root = (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
    const inner = root?.activeElement ?? null;
    if (!inner || inner === el) break;
    el = inner;
  }
  if (!el || (el.tagName !== 'IFRAME' && el.tagName !== 'FRAME')) return false;
  if (index >= 0) return (el as HTMLIFrameElement).contentWindow === window[index];
  if (deep < 0) return false;
  const all: Element[] = [];
  const walk = (root: Document | ShadowRoot, depth: number) => {
    for (const e of root.querySelectorAll('*')) {
      if (e.tagName === 'IFRAME' || e.tagName === 'FRAME') all.push(e);
      if (e.shadowRoot && depth < 32) walk(e.shadowRoot, depth + 1);
    }
  };
  walk(document, 0);
  return all[deep] === el;
}

/**
 * Keys go to the frame that has focus, which for an iframe's element is that frame only while
 * every document above it has its focus on the iframe leading there: a document keeps naming its
 * field as focused after focus went on to another frame (the page called a sibling iframe's
 * focus()). Throws (page_not_allowed) unless, from the frame of `target` up to the top document,
 * each parent's focused element is the iframe of the frame below it.
 */
async function assertFocusReaches(tabId: number, target: ScriptTarget, f: { url: string; why: string }): Promise<void> {
  const documentId = target.documentIds?.[0];
  if (!documentId) return;
  const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  let frame = all.find((x) => x.documentId === documentId);
  const away = () => refused(tabId, f, 'keys, with focus gone on from the frame of that element,');
  if (!frame) throw away();
  for (let i = 0; frame.frameId !== 0; i++) {
    const child: chrome.webNavigation.GetAllFrameResultDetails = frame;
    const parent = all.find((x) => x.frameId === child.parentFrameId && (child.parentDocumentId === undefined || x.documentId === child.parentDocumentId));
    const key = i < 32 && parent?.documentId ? await runInFrame(tabId, child, 'frameKeyInParent', []) : undefined;
    if (!parent?.documentId || !key) throw away();
    const [r] = await chrome.scripting.executeScript({ target: { tabId, documentIds: [parent.documentId] }, world: 'ISOLATED', func: focusIsFrame, args: [key[0], key[1]], injectImmediately: true }).catch(() => [] as chrome.scripting.InjectionResult<boolean>[]);
    if (r?.result !== true) throw away();
    frame = parent;
  }
}

/** Throws `refusal()` when the focused element of document `target` holds a frame, or cannot be told. */
async function assertFocusNotOnFrame(target: ScriptTarget, refusal: () => ToolError): Promise<void> {
  const [r] = await chrome.scripting.executeScript({ target, world: 'ISOLATED', func: focusedTag, injectImmediately: true }).catch(() => [] as chrome.scripting.InjectionResult<string>[]);
  // Unknown focus counts as in a frame: the keys are not sent.
  if (typeof r?.result !== 'string' || FRAME_TAGS.has(r.result)) throw refusal();
}

/**
 * Runs in the document keys would go to (ISOLATED world): the custom element whose closed shadow
 * root holds its focus when the page's own code did not attach that root (another extension's own
 * controls drawn in the page), else ''. Self-contained: the rule is dom.ts's pageOwnsClosedRoot,
 * and `typeKey` closed-roots.ts's CLOSED_ROOTS_TYPE_KEY.
 */
function focusedForeignUi(typeKey: string): string {
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  const type = (globalThis as unknown as Record<string, unknown>)[typeKey];
  const pageAttached = (host: Element): boolean => {
    if (typeof type !== 'string' || !type) return false;
    const e = new Event(type, { cancelable: true });
    try {
      host.dispatchEvent(e);
    } catch {
      return false;
    }
    return e.defaultPrevented;
  };
  let el: Element | null = document.activeElement;
  for (let i = 0; el && i < 32; i++) {
    const open = el.shadowRoot;
    const root = open ?? (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) ?? null : null);
    if (!root) break;
    if (!open && el.localName.includes('-') && !pageAttached(el)) return el.localName;
    const inner = root.activeElement;
    if (!inner || inner === el) break;
    el = inner;
  }
  return '';
}

/** Refuses (page_not_allowed) keys while focus is in another extension's own controls drawn in the page (focusedForeignUi): they would type into them, or press them. */
async function assertFocusNotOnForeignUi(tabId: number, target: ScriptTarget): Promise<void> {
  const [r] = await chrome.scripting.executeScript({ target, world: 'ISOLATED', func: focusedForeignUi, args: [CLOSED_ROOTS_TYPE_KEY], injectImmediately: true }).catch(() => [] as chrome.scripting.InjectionResult<string>[]);
  if (typeof r?.result === 'string' && r.result !== '') {
    throw new ToolError(`Focus in tab ${tabId} is in <${r.result}>, another extension's own controls drawn in the page (a closed shadow root the page did not attach); keys would go to them, so none was sent. Focus a field of the page first (a selector or ref)`, { code: 'page_not_allowed', category: 'auth' });
  }
}

/** Top documents (tab id, document id) that took a key pin off a refused frame's iframe while keys were sent: no more keys there. */
const keysOff = new Set<string>();

/**
 * Watches tab `tabId` from now until stop() for a frame (not the tab's own page) starting to load,
 * or committing, a page the tools may not use: the first one seen. Input sent over a while (keys,
 * a drag's moves, browser_move_mouse's steps) stops once one is seen: the pins of refused frames'
 * iframes hold only those there when they were set, and a page can add one, or send an iframe to
 * one, meanwhile.
 */
export function watchRefusedLoads(tabId: number): { seen: () => { url: string; why: string } | null; stop: () => void } {
  let seen: { url: string; why: string } | null = null;
  const on = (d: { tabId: number; frameId: number; url: string }) => {
    if (seen || d.tabId !== tabId || d.frameId === 0) return;
    const why = frameShowsRefusedPage(d.url);
    if (why) seen = { url: d.url, why };
  };
  chrome.webNavigation.onBeforeNavigate.addListener(on);
  chrome.webNavigation.onCommitted.addListener(on);
  return {
    seen: () => seen,
    stop: () => {
      chrome.webNavigation.onBeforeNavigate.removeListener(on);
      chrome.webNavigation.onCommitted.removeListener(on);
    },
  };
}

/** What assertKeysStayOut hands the key-sending tool. */
export interface KeyGuard {
  /**
   * Runs right before each key (or text) is sent: throws (page_not_allowed), and nothing more is
   * sent, once a frame of the tab started loading a page the tools may not use since the guard
   * began; the error says what was not sent (`unsent`, e.g. "the text was not typed").
   */
  beforeKey: (unsent: string) => void;
  /**
   * Runs once the keys were sent (also when they failed): undoes the pins, and fails the call when
   * the keys may have reached a refused frame. With `dialog` (a key opened one, which blocks the
   * page's scripts until it is answered) the pins are undone once the page runs again.
   */
  done: (dialog?: boolean) => Promise<void>;
}

/**
 * Refuses (page_not_allowed) key input into document `target` while its focus is on a
 * frame-holding element (the keys would go into that frame), or, for a document in an iframe, while
 * focus does not lead there from the top document (assertFocusReaches), and the tab shows a refused
 * page in a frame. Checked right before the keys are sent: a page can move focus in its own handlers.
 *
 * A page timer can move focus into such a frame between this check and the key (another
 * extension's inline menu, where Enter picks an entry), so from before the check until the keys
 * were sent every iframe of such a frame carries the HTML inert attribute (an inert iframe cannot
 * take focus; refusedFrameReaching 'inert'). A shortcut (`modifiers`, CDP's bit field, with Alt,
 * Ctrl or Meta: select all, copy, cut) is refused wherever focus is while such a frame can take
 * focus (refusedFrameReaching 'focus': its iframe has a layout box, even 0×0 or
 * visibility:hidden), since Ctrl+A, Ctrl+C there is how its text would leave it. A display:none
 * iframe holds no layout, so nothing in it is selected or copied: other extensions' hidden inline
 * menus leave shortcuts working; for the shortcut such iframes are also pinned display:none (page
 * stylesheets, :focus rules and animations cannot show them). done() undoes the pins, and when
 * the page took one off meanwhile (the keys may have gone into the frame) fails the call and
 * refuses every later key in that page.
 *
 * A frame that starts loading a refused page while the call is under way (the page adds an iframe
 * of one, or sends an iframe there, when the field gets focus, and focuses it once it loaded) was
 * not there to be pinned: the tab is watched from before the checks until the keys were sent
 * (watchRefusedLoads), whether or not such a frame was there at first. Once one is seen, no
 * further key is sent (beforeKey); one seen only after the last key was sent fails the call, and
 * refuses later keys in that page, when focus no longer leads to the document the keys were for.
 */
export async function assertKeysStayOut(tabId: number, target: ScriptTarget, modifiers = 0): Promise<KeyGuard> {
  const loads = watchRefusedLoads(tabId);
  let checked = false;
  const beforeKey = (unsent: string) => {
    const seen = loads.seen();
    if (seen) {
      throw new ToolError(
        `Tab ${tabId} loaded ${redactedUrl(seen.url) || 'a page'} in an iframe, which tools may not use (${seen.why}), while keys were sent: ${unsent}, since focus could go into that frame. Try again: a frame there before the keys is kept from taking focus`,
        { code: 'page_not_allowed', category: 'auth' },
      );
    }
    checked = true;
  };
  const topDocument = async () => (await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null))?.documentId;
  const startTop = await topDocument();
  /** After the keys: a refused page that started loading once the last key was let through, with focus gone elsewhere, fails the call. */
  const afterLoads = async () => {
    loads.stop();
    const seen = loads.seen();
    if (!seen || !checked) return;
    // The keys' page went (Enter submitted a form): the new page's frames got no key meant for the old one.
    if (startTop === undefined || (await topDocument()) !== startTop) return;
    const away = () => refused(tabId, seen, 'keys');
    try {
      await assertFocusNotOnFrame(target, away);
      await assertFocusReaches(tabId, target, seen);
    } catch {
      keysOff.add(`${tabId}:${startTop}`);
      throw new ToolError(
        `Tab ${tabId} loaded ${redactedUrl(seen.url) || 'a page'} in an iframe, which tools may not use (${seen.why}), while keys were sent, and focus went on from where they were aimed; the keys may have reached that frame, and keys are refused in this page from now on`,
        { code: 'page_not_allowed', category: 'auth' },
      );
    }
  };
  try {
    const f = await refusedFrameOf(tabId);
    if (!f) {
      await assertFocusNotOnForeignUi(tabId, target);
      if (keysOff.has(`${tabId}:${startTop ?? ''}`)) {
        throw new ToolError(`Keys sent to tab ${tabId} may have reached a frame showing a page tools may not use before: no keys are sent in this page any more`, { code: 'page_not_allowed', category: 'auth' });
      }
      let finished = false;
      return {
        beforeKey,
        done: async (dialog = false) => {
          if (finished) return;
          finished = true;
          // A dialog blocks the page's scripts until it is answered: focus is looked at then.
          if (dialog) void afterLoads().catch(() => {});
          else await afterLoads();
        },
      };
    }
    return await pinnedKeys(tabId, target, modifiers, f, beforeKey, afterLoads);
  } catch (err) {
    loads.stop();
    throw err;
  }
}

async function pinnedKeys(tabId: number, target: ScriptTarget, modifiers: number, f: { url: string; why: string }, beforeKey: (unsent: string) => void, afterLoads: () => Promise<void>): Promise<KeyGuard> {
  const shortcut = (modifiers & (1 | 2 | 4)) !== 0;
  // Focus already in such an iframe: refused before anything is pinned (pinned inert, the iframe
  // would lose focus and the keys would go to the page's body instead of where they were aimed).
  await assertFocusNotOnFrame(target, () => refused(tabId, f, 'keys, with focus in an iframe,'));
  // A key may navigate (Enter submitting a form), taking the pinned document away with its
  // frames: that does not count for plain keys.
  const goneCounts = shortcut;
  const token = crypto.randomUUID();
  const r = await refusedFrameReaching(tabId, shortcut ? 'focus' : 'inert', token);
  const page = `${tabId}:${r.topDocumentId ?? ''}`;
  if (r.frame || keysOff.has(page)) {
    await unpin(tabId, r.pinned, token, goneCounts).catch(() => true);
    if (r.frame) throw refused(tabId, r.frame, shortcut ? 'a shortcut key' : 'a key');
    throw refused(tabId, f, 'a key (this page took the pin off such an iframe while keys were sent before: no keys are sent in it any more)');
  }
  let done = false;
  const after = async (dialog = false) => {
    if (done) return;
    done = true;
    // A dialog the key opened blocks the page's scripts until it is answered: undone then.
    if (dialog) {
      void unpin(tabId, r.pinned, token, goneCounts).then((moved) => moved && keysOff.add(page), () => {});
      void afterLoads().catch(() => {});
      return;
    }
    const moved = await unpin(tabId, r.pinned, token, goneCounts);
    if (moved) {
      keysOff.add(page);
      await afterLoads().catch(() => {});
      throw new ToolError(
        `Tab ${tabId} ${shortcut ? 'changed the style of an iframe, took its inert attribute off or moved it,' : 'took the inert attribute off an iframe, or moved it,'} showing a page tools may not use (${redactedUrl(f.url) || 'a page'}) while keys were sent; the keys may have reached that frame, and keys are refused in this page from now on`,
        { code: 'page_not_allowed', category: 'auth' },
      );
    }
    await afterLoads();
  };
  try {
    await assertFocusNotOnFrame(target, () => refused(tabId, f, 'keys, with focus in an iframe,'));
    // An iframe's element (a ref fFeN): focus must lead there from the top document.
    await assertFocusReaches(tabId, target, f);
    await assertFocusNotOnForeignUi(tabId, target);
  } catch (err) {
    // No key was sent: the pins go, whatever the page did to them.
    done = true;
    await unpin(tabId, r.pinned, token, goneCounts).catch(() => true);
    throw err;
  }
  return { beforeKey, done: after };
}

/** The error of mouse input stopped (`what`: "a drag", "the mouse moves") because a frame of tab `tabId` started loading `seen`, a page tools may not use. */
export function refusedLoadError(tabId: number, seen: { url: string; why: string }, what: string): ToolError {
  return new ToolError(
    `Tab ${tabId} loaded ${redactedUrl(seen.url) || 'a page'} in an iframe, which tools may not use (${seen.why}), while ${what} went on; what was left of it was not sent, so that frame got none of it`,
    { code: 'page_not_allowed', category: 'auth' },
  );
}

/**
 * Sends `end` (the release of a mouse button held down, or the cancel of a drag) with every iframe
 * of a refused frame pinned pointer-events:none, as pressGuard pins them for a press: a gesture
 * stopped because such a frame loaded meanwhile ends on what is under it, not in it.
 */
export async function endPinned(tabId: number, end: () => Promise<unknown>): Promise<void> {
  const token = crypto.randomUUID();
  const r = await refusedFrameReaching(tabId, 'hit', token).catch(() => null);
  try {
    await end();
  } finally {
    await unpin(tabId, r?.pinned ?? [], token, false).catch(() => true);
  }
}

/**
 * For a mouse gesture sent at once (a click, a hover): the tab is watched (watchRefusedLoads) from
 * before the element is found (finding it may scroll the page, and a page can add an iframe of a
 * refused page over the element then) until stop(); check() right before the events are sent
 * throws (page_not_allowed) once a frame started loading such a page: it was not there when the
 * guard pinned refused frames' iframes, and would be drawn where the events go.
 */
export function watchMouseLoads(tabId: number, what: string): { check: () => void; stop: () => void } {
  const loads = watchRefusedLoads(tabId);
  return {
    check: () => {
      const seen = loads.seen();
      if (seen) throw refusedLoadError(tabId, seen, what);
    },
    stop: loads.stop,
  };
}
