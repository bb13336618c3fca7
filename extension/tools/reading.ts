/** The reading group: page text, HTML, element queries, screenshots. Each runs one script in the tab. */
import { ToolError } from '../shared/tool-error.ts';
import { pageFindError } from './acting.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { CAPTURE_RETRY_PAUSE_MS, captureSpaced, onScreen } from './capture.ts';
import { captureHidingForeignUi } from './capture-foreign-ui.ts';
import { frameOfRef } from './frame-ref.ts';
import { childFrames, FRAME_LEVELS_MAX, frameOffset, frameTarget, framesUnder, matchFrames, runIn, runInFrame, UNSURE_FRAME_NOTE, type ScriptTarget, type SubFrame } from './frames.ts';
import { frameRefusal } from './frame-policy.ts';
import { runPage, type PageFn, type PageLib } from './page-run.ts';
import { withFrames, type PageSnapshot } from './snapshot.ts';
import type { Handlers, ToolCtx } from './types.ts';
import { checkedCapture } from './secret-on-page.ts';
import { checkedScriptTarget, redactedUrl, scrubRefusedUrls, tabRefusal, tabRefusedError } from './url-policy.ts';

/**
 * Marks the lines of iframes in a snapshot, which withFrames fills with their frames' content. A
 * page cannot know it (it travels only between the worker and our isolated world), so its text
 * cannot pose as one. One per worker.
 */
const FRAME_MARK = `\u0001${crypto.randomUUID()}`;

/** One page-library call in the tab's top document, or in the frame a snapshot ref names (`ref`). */
export async function runInTab<K extends PageFn>(tabId: number, name: K, args: Parameters<PageLib[K]>, ref?: string | null, checked?: ScriptTarget): Promise<Awaited<ReturnType<PageLib[K]>>> {
  const frameId = frameOfRef(ref);
  const target = checked ?? (frameId ? await frameTarget(tabId, frameId, ref) : await checkedScriptTarget(tabId));
  try {
    return (await runPage(target, name, args)) as Awaited<ReturnType<PageLib[K]>>;
  } catch (err) {
    // Chrome's text may name the page it failed on: one the tools refuse only by scheme + host.
    const m = scrubRefusedUrls(String((err as Error | null)?.message ?? err));
    if (/Cannot access|chrome:\/\/|extensions gallery/i.test(m)) {
      throw new ToolError(`This page cannot be read by extensions (${m})`, { code: 'not_available', category: 'validation' });
    }
    if (err instanceof Error && err.message !== m) err.message = m;
    throw err;
  }
}

type PageText = { url: string; title: string; content: string; length: number; truncated: boolean; slots: [number, string, string, number, number][]; frameIndex: number; frameDeep: number };

/** What the result says when a page's iframes hold content the result does not include. */
function iframesNote(n: number, how: string): string {
  return `${n === 1 ? '1 iframe' : `${n} iframes`} in what was read: ${how}`;
}
const FRAMES_NOT_INCLUDED = 'their content is not included here; browser_snapshot shows it (refs such as f3e2 act inside a frame), browser_get_tab_content without a selector reads its text';

type ListedFrame = { url: string; name?: string; read: boolean; note?: string };

/**
 * browser_get_tab_content of a whole page with iframes: each frame's text where its iframe is in
 * the page's text (readPage says where), under a line `[iframe Name (url)]` and set apart by blank
 * lines (a frame inside a frame likewise in its parent's text, indented), all within maxLength; an
 * iframe that has no place in the text (inside a hidden element) at the end. Frames are the
 * children of the very document read (parentDocumentId), scripted by documentId only when the URL
 * policy allows them (a frame inside one is reached only through it); a refused one is named on
 * its line and never scripted, one that does not answer within FRAME_ANSWER_MS is named as such.
 * Frames are matched to their iframes by matchFrames (frames.ts).
 */
async function withFrameTexts(tabId: number, top: PageText, topDocumentId: string | undefined, maxLength: number) {
  const { slots: _, frameIndex: __, frameDeep: ___, ...rest } = top;
  const all = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  const listed: ListedFrame[] = [];
  /** The characters of the documents read that each read left out (it stops at its maxLength). */
  let unread = top.length - top.content.length;
  let truncated = top.truncated;
  /**
   * The document's text with its frames' put in (and theirs in them). `start`: where the
   * document's text starts in the whole text at the earliest; a frame's text starts after its
   * iframe's place, so reading more than maxLength past the first place would be cut anyway.
   */
  const expand = async (doc: PageText, parentFrameId: number, parentDocumentId: string | undefined, depth: number, start: number): Promise<string> => {
    if (!doc.slots.length) return doc.content;
    const placeOf = (place: number) => (place >= 0 && place <= doc.length ? place : doc.length);
    const room = Math.max(0, maxLength - start - Math.min(...doc.slots.map((s) => placeOf(s[3]))));
    const children = childFrames(all, parentFrameId, parentDocumentId);
    const answers = depth > FRAME_LEVELS_MAX ? [] : await Promise.all(children.filter((f) => f.documentId && !frameRefusal(f.url)).map(async (frame) => {
      const r = await runInFrame(tabId, frame, 'readPage', ['text', null, room]);
      return { frame, r: r && 'content' in r ? (r as PageText) : null };
    }));
    const matches = matchFrames(doc.slots.map(([index, , src, , deep]) => ({ index, deep, src })), children, answers);
    const pad = '  '.repeat(depth - 1);
    /** Each iframe's lines and its place in the document's whole text (`at`; the end when it has none). */
    const blocks: { at: number; text: string }[] = [];
    for (const [i, [, name, src, place]] of doc.slots.entries()) {
      const at = placeOf(place);
      const { frame, r, unsure } = matches[i] ?? {};
      const hit = frame && r ? { frame, r } : undefined;
      if (hit) {
        const label = name || hit.r.title;
        if (hit.r.truncated) truncated = true;
        unread += hit.r.length - hit.r.content.length;
        listed.push({ url: hit.r.url, ...(label ? { name: label } : {}), read: true });
        const text = await expand(hit.r, hit.frame.frameId, hit.frame.documentId, depth + 1, start + at);
        blocks.push({ at, text: `${pad}[iframe ${label ? `${label} ` : ''}(${shortUrl(hit.r.url)})]\n${text}` });
        continue;
      }
      const url = frame?.url || src;
      const why = url ? frameRefusal(url) : null;
      const note = why ? `tools may not read it: ${why}` : depth > FRAME_LEVELS_MAX ? `iframes nested more than ${FRAME_LEVELS_MAX} deep are not read` : unsure ? UNSURE_FRAME_NOTE : 'it did not answer: not loaded yet, or its page is busy';
      const shown = why ? redactedUrl(url) : shortUrl(url);
      blocks.push({ at, text: `${pad}[iframe ${name ? `${name} ` : ''}(${shown}): not read (${note})]` });
      listed.push({ url: shown, ...(name ? { name } : {}), read: false, note });
    }
    // In text order (iframes with no place last); the page's text past what was read is left out,
    // and so are the iframes placed there. Blank lines set each iframe apart from the text before
    // and after it; whether text follows is told by the whole text's length (the same whether
    // the read stopped early or not, so `length` counts the same either way).
    blocks.sort((x, y) => x.at - y.at);
    let out = '';
    let from = 0;
    let last = -1;
    for (const b of blocks) {
      const to = Math.min(b.at, doc.content.length);
      if (last >= 0 && b.at > last) out += '\n\n';
      out += doc.content.slice(from, to);
      from = to;
      out += (b.at > 0 || out ? '\n\n' : '') + b.text;
      last = b.at;
    }
    if (last < doc.length) out += `\n\n${doc.content.slice(from)}`;
    return out;
  };
  const full = await expand(top, 0, topDocumentId, 1, 0);
  if (full.length > maxLength) truncated = true;
  return { ...rest, content: full.slice(0, maxLength), length: full.length + unread, truncated, frames: listed };
}

const shortUrl = (url: string) => (url.length > 120 ? `${url.slice(0, 120)}…` : url);

/**
 * waitInPage for a tool call: the wait stops in the page when the call's signal fires (cancel,
 * Stop, server timeout), and progress (elapsed of timeoutMs) is reported every second, which also
 * tells the caller the call is alive.
 */
export async function waitInTab(
  tabId: number,
  target: { selector: string | null; text: string | null; state: 'visible' | 'attached' | 'hidden'; timeoutMs: number },
  ctx: Pick<ToolCtx, 'signal' | 'progress'>,
): Promise<{ found: boolean; state: string; elapsedMs: number }> {
  const waitId = crypto.randomUUID();
  const t0 = Date.now();
  const top = await checkedScriptTarget(tabId);
  /** The frames' documents a wait was started in (by documentId). */
  const started = new Map<string, ScriptTarget>();
  let finished = false;
  const cancel = () => {
    void runInTab(tabId, 'cancelWaitInPage', [waitId], null, top).catch(() => {});
    for (const t of started.values()) void runIn(t, 'cancelWaitInPage', [waitId]).catch(() => {});
  };
  ctx.signal.addEventListener('abort', cancel, { once: true });
  const tick = setInterval(() => ctx.progress({ progress: Date.now() - t0, total: target.timeoutMs, message: 'waiting' }), WAIT_PROGRESS_MS);
  // The wait's own timeout runs in the page: a page whose main thread is blocked (a busy script)
  // never reports it, and the progress ticks above would keep the call alive up to the server's
  // cap of minutes. The worker gives up shortly after timeoutMs instead.
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  const unanswered = new Promise<never>((_, reject) => {
    giveUp = setTimeout(() => {
      cancel();
      reject(new ToolError(`Timed out after ${target.timeoutMs} ms: the page in tab ${tabId}${started.size ? ' or one of its iframes' : ''} did not answer (its main thread is busy, or a dialog blocks it)`, { code: 'timeout', category: 'timeout', retryable: true }));
    }, target.timeoutMs + WAIT_ANSWER_GRACE_MS);
  });
  unanswered.catch(() => {});
  type Answer = { found: boolean; state: string; elapsedMs: number } | { error: string } | undefined;
  /** The same wait in a frame's document (its own observer and timeout, of the time left). */
  const startIn = (frame: SubFrame): Promise<Answer> => {
    const t = { tabId, documentIds: [frame.frame.documentId] };
    started.set(frame.frame.documentId, t);
    return runIn(t, 'waitInPage', [null, target.text, target.state, Math.max(0, target.timeoutMs - (Date.now() - t0)), waitId]).catch(() => undefined);
  };
  const allowed = (frames: SubFrame[]) => frames.filter((f) => !f.refused && f.frame.documentId);
  /**
   * A text that appears: looked for in each frame of the page too, also in a frame that loads
   * during the wait (the frames are listed again every FRAME_POLL_MS; that asks the browser, not
   * the page). Resolves when a frame shows it; never otherwise (the top page's wait decides).
   */
  const foundInFrames = () => new Promise<Answer>((resolve) => {
    void (async () => {
      for (let i = 0; i < 10_000 && !finished && Date.now() - t0 < target.timeoutMs; i++) {
        for (const f of allowed(await framesUnder(tabId, top.documentIds?.[0]))) {
          if (finished || started.has(f.frame.documentId)) continue;
          void startIn(f).then((r) => {
            if (r && !('error' in r)) resolve({ ...r, elapsedMs: Date.now() - t0 });
          });
        }
        await new Promise((r) => setTimeout(r, FRAME_POLL_MS));
      }
    })();
  });
  /** A text that goes away: once gone from the top page, it has to be gone from each frame too. */
  const goneFromFrames = async (topAnswer: Answer): Promise<Answer> => {
    const frames = allowed(await framesUnder(tabId, top.documentIds?.[0]));
    const answers = await Promise.all(frames.map(startIn));
    // No answer: the frame's document went away (its text with it).
    const failed = answers.find((r) => r && 'error' in r);
    if (failed) return failed;
    return frames.length ? { found: false, state: 'hidden', elapsedMs: Date.now() - t0 } : topAnswer;
  };
  try {
    const inPage: Promise<Answer> = runInTab(tabId, 'waitInPage', [target.selector, target.text, target.state, target.timeoutMs, waitId], null, top);
    inPage.catch(() => {});
    let r: Answer;
    if (target.selector !== null) r = await Promise.race([inPage, unanswered]);
    else if (target.state === 'hidden') {
      r = await Promise.race([inPage, unanswered]);
      if (r && !('error' in r)) r = await Promise.race([goneFromFrames(r), unanswered]);
    } else r = await Promise.race([inPage, foundInFrames(), unanswered]);
    ctx.signal.throwIfAborted();
    // No result: the document the wait ran in went away (the tab navigated or reloaded).
    if (!r) throw new ToolError(`The page in tab ${tabId} navigated or reloaded during the wait; wait again on the new page`, { code: 'not_available', category: 'validation', retryable: true });
    if ('error' in r) {
      if (r.error.startsWith('Timed out')) throw new ToolError(r.error, { code: 'timeout', category: 'timeout', retryable: true });
      throw new ToolError(r.error, { code: 'invalid_arguments', category: 'validation' });
    }
    return r;
  } finally {
    finished = true;
    clearInterval(tick);
    clearTimeout(giveUp);
    ctx.signal.removeEventListener('abort', cancel);
    // Waits still running in the page or its frames (the text was found elsewhere) stop.
    if (started.size) cancel();
  }
}

const WAIT_PROGRESS_MS = 1_000;
/** How often a text wait lists the tab's frames again (to look in frames loaded meanwhile too). */
const FRAME_POLL_MS = 250;
/** How long past its timeoutMs a wait may take to hear back from the page. */
const WAIT_ANSWER_GRACE_MS = 2_000;

async function assertStillShown(tabId: number, windowId: number): Promise<void> {
  const [active] = await chrome.tabs.query({ active: true, windowId });
  if (!active || active.id !== tabId) throw new ToolError(`Tab ${tabId} stopped being the visible tab of its window during the capture; try again`, { code: 'tool_error', category: 'internal', retryable: true });
  const why = tabRefusal(active);
  if (why) throw tabRefusedError(tabId, why);
}

function withoutFrameFields(r: PageText) {
  const { slots: _, frameIndex: __, frameDeep: ___, ...rest } = r;
  return rest;
}

function unwrap<T extends object>(r: T | { error: string }): T {
  if ('error' in r) throw pageFindError(r.error);
  return r;
}

/**
 * The most device pixels a screenshot beyond the viewport may cover, and the longest side. Chrome
 * renders such a capture whole before encoding it: a full-page shot under an 8K emulation at 2×
 * (15360 × 20000 device pixels, 1.2 GB of raw pixels) ran past the call's timeout, busying the
 * tab's renderer. Its image could not be returned anyway (one result carries under 10 MB).
 */
const CAPTURE_MAX_DEVICE_PIXELS = 64 * 1024 * 1024;
const CAPTURE_MAX_SIDE_PX = 16_384;

/** Refuse (result_too_large) a capture of `clip` (CSS pixels) above the device-pixel bounds, before Chrome renders it. */
async function assertCapturable(send: CdpSend, clip: { width: number; height: number }): Promise<void> {
  // Device pixels per CSS pixel, an emulated deviceScaleFactor included (the layout metrics' two
  // viewports do not show one). A page can only make its own capture refused by changing it.
  const dpr = await send<{ result?: { value?: unknown } }>('Runtime.evaluate', { expression: 'devicePixelRatio', returnByValue: true }).catch(() => null);
  const value = Number(dpr?.result?.value);
  const scale = Number.isFinite(value) && value > 1 ? Math.min(value, 16) : 1;
  const w = Math.ceil(clip.width * scale);
  const h = Math.ceil(clip.height * scale);
  if (w * h <= CAPTURE_MAX_DEVICE_PIXELS && w <= CAPTURE_MAX_SIDE_PX && h <= CAPTURE_MAX_SIDE_PX) return;
  throw new ToolError(
    `The screenshot would be ${w} × ${h} device pixels (${Math.round((w * h) / 1e6)} million${scale !== 1 ? `, at ${Math.round(scale * 100) / 100} device pixels per CSS pixel` : ''}), over the ${CAPTURE_MAX_SIDE_PX} pixels a side and ${Math.round(CAPTURE_MAX_DEVICE_PIXELS / 1e6)} million in all one capture may cover; ` +
      'shoot the viewport or one element (selector), or lower the emulated deviceScaleFactor',
    { code: 'result_too_large', category: 'validation' },
  );
}

/** How long Chrome may take to draw a tab its window does not show. */
const BACKGROUND_SHOT_MS = 15_000;

/** The viewport of a background tab, through the DevTools protocol (which needs the tab neither shown nor focused). */
async function backgroundShot(tabId: number, send: CdpSend, format: 'png' | 'jpeg', quality: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolError(`Chrome did not draw tab ${tabId}, which its window does not show, within ${BACKGROUND_SHOT_MS} ms; show it (browser_focus_tab), or shoot it with fullPage, then retry`, { code: 'timeout', category: 'timeout', retryable: true })), BACKGROUND_SHOT_MS);
  });
  try {
    const shot = await Promise.race([send<{ data: string }>('Page.captureScreenshot', { format, ...(format === 'jpeg' ? { quality } : {}) }), late]);
    return shot.data;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Said with an empty read of a tab showing a PDF: Chrome draws it in its own viewer (a browser
 * page in the tab), whose text scripts of the page cannot read. Null for any other document.
 */
async function pdfNote(target: ScriptTarget): Promise<string | null> {
  const [r] = await chrome.scripting.executeScript({ target, world: 'ISOLATED', func: () => document.contentType }).catch(() => [] as chrome.scripting.InjectionResult<string>[]);
  if (r?.result !== 'application/pdf') return null;
  return 'This tab shows a PDF in Chrome\'s viewer, whose text the tools cannot read: browser_screenshot_tab shows its first page, or browser_download fetches the file';
}

export const readingTools = {
  async browser_get_tab_content(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const maxLength = input.maxLength ?? 50_000;
    const target = await checkedScriptTarget(tab.id!);
    const r = unwrap(await runInTab(tab.id!, 'readPage', ['text', input.selector ?? null, maxLength], null, target)) as PageText;
    // No iframe in the page: no look for frames at all.
    if (!r.slots.length) {
      const pdf = r.length === 0 && !input.selector ? await pdfNote(target) : null;
      return { value: { ...withoutFrameFields(r), ...(pdf ? { note: pdf } : {}) } };
    }
    // With a selector the part read is of the top document; the frames it holds are said, not read.
    if (input.selector) return { value: { ...withoutFrameFields(r), iframes: iframesNote(r.slots.length, 'their text is not included here; without a selector this tool reads it too, and browser_snapshot shows it (refs such as f3e2 act inside a frame)') } };
    return { value: await withFrameTexts(tab.id!, r, target.documentIds?.[0], maxLength) };
  },

  async browser_get_page_html(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const r = unwrap(await runInTab(tab.id!, 'readPage', ['html', input.selector ?? null, input.maxLength ?? 200_000])) as PageText;
    return { value: { ...withoutFrameFields(r), ...(r.slots.length ? { iframes: iframesNote(r.slots.length, FRAMES_NOT_INCLUDED) } : {}) } };
  },

  async browser_query_elements(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const r = unwrap(await runInTab(tab.id!, 'queryPage', [String(input.selector), input.limit ?? 100, input.attributes ?? null]));
    const { iframes, ...rest } = r;
    return { value: { ...rest, ...(iframes ? { iframes: iframesNote(iframes, `they are not searched; ${FRAMES_NOT_INCLUDED}`) } : {}) } };
  },

  async browser_wait_for_element(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    if (input.selector === undefined && input.text === undefined) {
      throw new ToolError('Pass either selector or text', { code: 'invalid_arguments', category: 'validation' });
    }
    const timeoutMs = input.timeoutMs ?? 10_000;
    return { value: await waitInTab(tab.id!, { selector: input.selector ?? null, text: input.text ?? null, state: input.state ?? 'visible', timeoutMs }, ctx) };
  },

  async browser_snapshot(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const maxDepth = input.maxDepth ?? 50;
    const interactiveOnly = input.interactiveOnly === true;
    const target = await checkedScriptTarget(tab.id!);
    const answer = await runInTab(tab.id!, 'snapshotPage', [input.selector ?? null, maxDepth, interactiveOnly, '', FRAME_MARK], null, target);
    if (!answer) throw new ToolError(`The page in tab ${tab.id} gave no snapshot (it navigated, or its script failed); try again, or snapshot a part with a selector`, { code: 'not_available', category: 'internal', retryable: true });
    const top = unwrap(answer) as PageSnapshot;
    const { frameIndex: _, frameDeep: __, ...r } = { ...top, ...(await withFrames(tab.id!, top, FRAME_MARK, maxDepth, interactiveOnly, target.documentIds?.[0])) };
    const pdf = r.snapshot === '' && input.selector === undefined ? await pdfNote(target) : null;
    if (pdf) return { value: { ...r, note: pdf }, text: `Page: ${r.title} (${r.url})\n${pdf}` };
    // The model reads the outline as plain text; REST callers get the same fields as JSON.
    return { value: r, text: `Page: ${r.title} (${r.url})\n${r.snapshot}` };
  },

  async browser_screenshot_tab(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const format = (input.format as 'png' | 'jpeg' | undefined) ?? 'png';
    const quality = input.quality ?? 80;
    const mimeType = format === 'jpeg' ? 'image/jpeg' : 'image/png';
    const target = input.selector ?? null;
    const ref = input.ref ?? null;
    let clip: { x: number; y: number; width: number; height: number } | null = null;
    // Not of a page showing the secret or a frame the tools may not use, before, during or after
    // the capture, nor with other extensions' own controls drawn in it (captureHidingForeignUi).
    const data = await checkedCapture(tab.id!, 'screenshot', () => captureHidingForeignUi(tab.id!, 'screenshot', async (): Promise<string> => {
      if (input.fullPage === true || target || ref) {
        // Beyond the viewport or one element: the DevTools protocol, which needs no focus.
        const frameId = frameOfRef(ref);
        let inFrame: { x: number; y: number; width: number; height: number } | null = null;
        if (frameId) {
          // An element inside an iframe: its box in the frame's viewport, moved by the boxes of the
          // iframes holding it into the tab's viewport and cut to what those iframes show.
          const r = await runInTab(tab.id!, 'elementBox', [null, ref, true], ref);
          if ('error' in r) throw pageFindError(r.error);
          const offset = await frameOffset(tab.id!, frameId);
          const c = offset.clip;
          const left = Math.max(c.left, r.x + offset.x);
          const top = Math.max(c.top, r.y + offset.y);
          const right = Math.min(c.right, r.x + offset.x + r.width);
          const bottom = Math.min(c.bottom, r.y + offset.y + r.height);
          if (right <= left || bottom <= top) throw new ToolError(`The element ${ref} is outside the visible part of its iframe`, { code: 'not_found', category: 'not_found' });
          inFrame = { x: left, y: top, width: right - left, height: bottom - top };
        } else if (target || ref) {
          const r = await runInTab(tab.id!, 'elementBox', [target, ref]);
          if ('error' in r) throw pageFindError(r.error);
          clip = r;
        }
        return await withDebugger(tab.id!, async (send) => {
          if (inFrame) {
            // The clip is in the top document's coordinates: the viewport's plus its scroll.
            const m = await send<{ cssLayoutViewport: { pageX: number; pageY: number } }>('Page.getLayoutMetrics');
            // Whole pixels: the boxes of the iframes on the way may put the element between two.
            const x = Math.round(inFrame.x + m.cssLayoutViewport.pageX);
            const y = Math.round(inFrame.y + m.cssLayoutViewport.pageY);
            clip = { x, y, width: Math.max(1, Math.round(inFrame.width)), height: Math.max(1, Math.round(inFrame.height)) };
          }
          if (!clip) {
            const m = await send<{ cssContentSize: { width: number; height: number } }>('Page.getLayoutMetrics');
            clip = { x: 0, y: 0, width: Math.ceil(m.cssContentSize.width), height: Math.ceil(m.cssContentSize.height) };
          }
          await assertCapturable(send, clip);
          const shot = await send<{ data: string }>('Page.captureScreenshot', {
            format,
            ...(format === 'jpeg' ? { quality } : {}),
            captureBeyondViewport: true,
            clip: { ...clip, scale: 1 },
          });
          return shot.data;
        });
      } else if (!(await onScreen(tab.id!))) {
        // The viewport of a tab its window does not show, or of a minimized window: the DevTools
        // protocol draws it without showing it (bringing it to the front, or restoring the window,
        // took the window from the user, and their typing).
        return await withDebugger(tab.id!, (send) => backgroundShot(tab.id!, send, format, quality));
      } else {
        // The visible part of the tab its window shows: captureVisibleTab shoots that.
        await assertStillShown(tab.id!, tab.windowId);
        let dataUrl: string;
        try {
          dataUrl = await captureSpaced(tab.windowId, { format, quality });
        } catch {
          // Once more (CAPTURE_RETRY_PAUSE_MS), if the call still stands and the tab is still shown.
          await new Promise((r) => setTimeout(r, CAPTURE_RETRY_PAUSE_MS));
          ctx.signal.throwIfAborted();
          // The user minimized the window meanwhile: drawn as a tab off screen is.
          if (!(await onScreen(tab.id!))) return await withDebugger(tab.id!, (send) => backgroundShot(tab.id!, send, format, quality));
          await assertStillShown(tab.id!, tab.windowId);
          try {
            dataUrl = await captureSpaced(tab.windowId, { format, quality });
          } catch (err) {
            throw new ToolError(`Could not capture tab ${tab.id}: ${(err as Error).message}`, { code: 'not_available', category: 'internal', retryable: true });
          }
        }
        // captureVisibleTab shoots whatever the window shows: make sure that was still this tab, on an allowed page.
        await assertStillShown(tab.id!, tab.windowId);
        return dataUrl.slice(dataUrl.indexOf(',') + 1);
      }
    }));
    return {
      value: { tabId: tab.id, url: tab.url, format, bytes: Math.floor((data.length * 3) / 4), ...(clip ? { clip } : {}) },
      images: [{ data, mimeType }],
    };
  },
} satisfies Partial<Handlers>;
