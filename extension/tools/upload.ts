/**
 * browser_upload_file: local files into an <input type=file>, as if the user chose them in the
 * file dialog (DOM.setFileInputFiles; the page gets input and change events). Given a button or
 * label that opens a file chooser instead, it clicks it with choosers intercepted
 * (Page.setInterceptFileChooserDialog) and fills the input behind the chooser.
 *
 * The server checks the user's files and hands over copies it made of them in
 * <config dir>/upload-staging/<random>/<name> (server/tools/upload-staging.ts), a folder only it
 * writes: Chrome opens the paths it is given, links followed, at setFileInputFiles and whenever
 * the page reads a file later, and a path in a folder an agent can write could lead elsewhere by
 * then. So only such paths are taken here; the rest of the config folder stays refused (auth.json
 * holds the secret; url-policy.ts knows the folder). The extension cannot look at the disk, so each
 * path is first tried on a detached file input in an isolated world of ours, where reading the
 * file's first byte fails for a missing file or a folder; only then do the files reach the page's input.
 */
import { ToolError } from '../shared/tool-error.ts';
import { click, point } from './acting.ts';
import { debuggerEvents } from './cdp-events.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { runWatchingDialogs } from './dialogs.ts';
import { assertMouseStaysOut, pressGuard, watchMouseLoads } from './input-guard.ts';
import { markElement, markedObject, utilityWorld } from './element-node.ts';
import type { Handlers } from './types.ts';
import { assertApprovedSite, insideProtectedFolder, refusalReason, tabRefusedError, urlPolicy } from './url-policy.ts';
import { UPLOAD_STAGING_DIR } from '../../server/protocol/limits.ts';

const isAbsolute = (p: string) => p.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(p) || p.startsWith('\\\\');

/** file:// URL of a path (for the protected-folder check, which works on URLs). */
function fileUrl(p: string): string {
  const u = new URL('file:///');
  u.pathname = p.replace(/\\/g, '/');
  return u.href;
}

/**
 * Whether `p` is a copy the server staged: <config dir>/upload-staging/<32 hex digits>/<name>, the
 * config dir as the server told it (sync.full protectedPaths: as given and resolved), no '.' or
 * '..' and no empty name on the way.
 */
function isStagedCopy(p: string): boolean {
  const s = p.replace(/\\/g, '/');
  const parts = s.split('/');
  if (parts.some((x, i) => x === '.' || x === '..' || (x === '' && i > 0))) return false;
  const lower = s.toLowerCase();
  return urlPolicy().protectedPaths.some((root) => {
    const prefix = `${root}/${UPLOAD_STAGING_DIR}/`;
    if (!lower.startsWith(prefix)) return false;
    const rest = lower.slice(prefix.length).split('/');
    return rest.length === 2 && /^[0-9a-f]{32}$/.test(rest[0]!) && rest[1] !== '';
  });
}

function checkPaths(paths: readonly string[]): void {
  for (const p of paths) {
    if (!isAbsolute(p)) throw new ToolError(`"${p}" is not an absolute path; pass the full path of the file`, { code: 'invalid_arguments', category: 'validation' });
    if (p.includes('\0')) throw new ToolError('A path contains a NUL character', { code: 'invalid_arguments', category: 'validation' });
    if (isStagedCopy(p)) continue;
    if (insideProtectedFolder(fileUrl(p))) throw new ToolError(`"${p}" is inside the OpenTabs config folder (holds the secret); it cannot be uploaded`, { code: 'permission_denied', category: 'auth' });
    throw new ToolError(
      `"${p}" is not a copy the OpenTabs server made for this upload (in its config folder's ${UPLOAD_STAGING_DIR}); the page gets only those. Call browser_upload_file through the server.`,
      { code: 'permission_denied', category: 'auth' },
    );
  }
}

/** Name and size of each file, read through a detached input no page script sees; fails for a missing file or a folder. */
async function probeFiles(send: CdpSend, paths: readonly string[]): Promise<{ name: string; size: number }[]> {
  const contextId = await utilityWorld(send);
  const made = await send<{ result: { objectId?: string } }>('Runtime.evaluate', {
    expression: `(() => { const i = document.createElement('input'); i.type = 'file'; i.multiple = true; return i; })()`,
    contextId,
  });
  const objectId = made.result.objectId;
  if (!objectId) throw new ToolError('Could not make a file input to check the files', { code: 'internal', category: 'internal' });
  try {
    await send('DOM.setFileInputFiles', { files: [...paths], objectId });
    const r = await send<{ result: { value?: { name: string; size: number; error?: string }[] } }>('Runtime.callFunctionOn', {
      objectId,
      functionDeclaration: `async function () {
        const out = [];
        for (const f of this.files) {
          try { const rd = f.stream().getReader(); await rd.read(); await rd.cancel(); out.push({ name: f.name, size: f.size }); }
          catch (e) { out.push({ name: f.name, size: f.size, error: String((e && e.name) || e) }); }
        }
        return out;
      }`,
      awaitPromise: true,
      returnByValue: true,
    });
    const files = r.result.value ?? [];
    if (files.length !== paths.length) throw new ToolError(`Chrome took ${files.length} of the ${paths.length} files; check the paths`, { code: 'not_found', category: 'not_found' });
    files.forEach((f, i) => {
      if (f.error) throw new ToolError(`Cannot read "${paths[i]}" (${f.error}): it does not exist, is a folder or is not readable`, { code: 'not_found', category: 'not_found' });
    });
    return files.map(({ name, size }) => ({ name, size }));
  } finally {
    await send('Runtime.releaseObject', { objectId }).catch(() => {});
  }
}

/**
 * The click lands on whatever page the tab shows by then: the chooser it opened gets the files only
 * while the tab's page is allowed and, for an approved call, of the approved site. (A navigation
 * after this check leaves the chooser's node in a document that is gone.)
 */
async function assertChooserPage(tabId: number, send: CdpSend): Promise<void> {
  const { frameTree } = await send<{ frameTree: { frame: { url: string } } }>('Page.getFrameTree');
  const why = refusalReason(frameTree.frame.url);
  if (why) throw tabRefusedError(tabId, why);
  assertApprovedSite(tabId, frameTree.frame.url);
}

/** How long a click may take to open a file chooser. */
const CHOOSER_WAIT_MS = 3_000;

/** Click the element with file choosers intercepted and give the chooser that opens the files. */
async function throughChooser(tabId: number, send: CdpSend, input: { selector?: string; ref?: string; paths: readonly string[] }, what: string, tag: string, signal: AbortSignal): Promise<void> {
  // As browser_click_element: a refused frame that starts loading from here on gets no click.
  const loads = watchMouseLoads(tabId, 'the click');
  try {
    await clickOpensChooser(tabId, send, input, what, tag, signal, loads.check);
  } finally {
    loads.stop();
  }
}

async function clickOpensChooser(tabId: number, send: CdpSend, input: { selector?: string; ref?: string; paths: readonly string[] }, what: string, tag: string, signal: AbortSignal, check: () => void): Promise<void> {
  const p = await point(tabId, input, false, false, false, signal);
  // As browser_click_element: not at an iframe of a page the tools may not use, and such iframes
  // pinned pointer-events:none until the press was sent (a page moving one over the button).
  await assertMouseStaysOut(tabId, p.tag, p);
  // A busy page can hold the lookup up past the call's end: no click (and no chooser) after it.
  signal.throwIfAborted();
  let onOpen!: (e: { mode: string; backendNodeId?: number }) => void;
  const opened = new Promise<{ mode: string; backendNodeId?: number }>((resolve) => (onOpen = resolve));
  const off = debuggerEvents(tabId, (method, params) => {
    if (method === 'Page.fileChooserOpened') onOpen(params as { mode: string; backendNodeId?: number });
  });
  try {
    await send('Page.enable');
    await send('Page.setInterceptFileChooserDialog', { enabled: true });
    // One pipelined gesture: a lone move would wait for the page's next frame, ≈ 5 s in a hidden
    // tab (see moveMouse in acting.ts); the press hands it over at once. Not so while the tab
    // shows a refused page in a frame: then the point is checked again once the page has the move.
    const guard = await pressGuard(tabId, p);
    const steps = guard && { beforeMove: async () => (await guard.beforeInput(), check()), beforePress: async () => (await guard.beforePress(), check()) };
    let pressed: { dialog?: unknown } | undefined;
    try {
      pressed = await runWatchingDialogs(tabId, send, () => (check(), click(send, p, 'left', 1, 0, steps)));
    } finally {
      await guard?.afterPress(pressed?.dialog !== undefined);
    }
    const chooser = await Promise.race([opened, new Promise<null>((r) => setTimeout(() => r(null), CHOOSER_WAIT_MS))]);
    if (!chooser) {
      throw new ToolError(`${what} is a <${tag}>, not an <input type=file>, and clicking it opened no file chooser; pass the file input (or the button that opens one)`, { code: 'invalid_arguments', category: 'validation' });
    }
    if (chooser.backendNodeId === undefined) {
      throw new ToolError(`Clicking ${what} opened a file picker that is not an <input type=file> (File System Access API); it cannot be filled`, { code: 'not_available', category: 'validation' });
    }
    if (input.paths.length > 1 && chooser.mode !== 'selectMultiple') {
      throw new ToolError(`The file chooser ${what} opens takes one file; pass one path`, { code: 'invalid_arguments', category: 'validation' });
    }
    await assertChooserPage(tabId, send);
    await send('DOM.setFileInputFiles', { files: [...input.paths], backendNodeId: chooser.backendNodeId });
  } finally {
    off();
    await send('Page.setInterceptFileChooserDialog', { enabled: false }).catch(() => {});
  }
}

export const uploadTools = {
  async browser_upload_file(input, ctx) {
    checkPaths(input.paths);
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    const what = input.ref ?? input.selector;
    const files = await withDebugger(tabId, async (send) => {
      const { el, mark } = await markElement(tabId, input.selector, input.ref);
      // Taken at once: the mark comes off the element whatever happens next.
      const objectId = await markedObject(send, mark);
      if (el.tag !== 'input' || el.type !== 'file') {
        await send('Runtime.releaseObject', { objectId }).catch(() => {});
        // A button or label that opens a file chooser: click it with the chooser intercepted.
        const probed = await probeFiles(send, input.paths);
        await throughChooser(tabId, send, input, what ?? '', el.tag, ctx.signal);
        return probed;
      }
      if (input.paths.length > 1 && !el.multiple) {
        throw new ToolError(`${what} takes one file (it has no \`multiple\`); pass one path`, { code: 'invalid_arguments', category: 'validation' });
      }
      const probed = await probeFiles(send, input.paths);
      ctx.signal.throwIfAborted(); // given up meanwhile: the input gets no files
      await send('DOM.setFileInputFiles', { files: [...input.paths], objectId });
      return probed;
    });
    return { value: { uploaded: files.length, files } };
  },
} satisfies Partial<Handlers>;
