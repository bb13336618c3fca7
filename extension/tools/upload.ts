/**
 * browser_upload_file: local files into an <input type=file>, as if the user chose them in the
 * file dialog (DOM.setFileInputFiles; the page gets input and change events).
 *
 * The paths must be absolute and may not be in the OpenTabs config folder (auth.json holds the
 * secret; url-policy.ts knows the folder). The extension cannot look at the disk, so each path is
 * first tried on a detached file input in an isolated world of ours, where reading the file's first
 * byte fails for a missing file or a folder; only then do the files reach the page's input.
 */
import { ToolError } from '../shared/tool-error.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { markElement, markedObject, utilityWorld } from './element-node.ts';
import { getTab } from './tabs.ts';
import type { Handlers } from './types.ts';
import { insideProtectedFolder } from './url-policy.ts';

const isAbsolute = (p: string) => p.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(p) || p.startsWith('\\\\');

/** file:// URL of a path (for the protected-folder check, which works on URLs). */
function fileUrl(p: string): string {
  const u = new URL('file:///');
  u.pathname = p.replace(/\\/g, '/');
  return u.href;
}

function checkPaths(paths: readonly string[]): void {
  for (const p of paths) {
    if (!isAbsolute(p)) throw new ToolError('invalid_arguments', `"${p}" is not an absolute path; pass the full path of the file`, { category: 'validation' });
    if (p.includes('\0')) throw new ToolError('invalid_arguments', 'A path contains a NUL character', { category: 'validation' });
    if (insideProtectedFolder(fileUrl(p))) throw new ToolError('permission_denied', `"${p}" is inside the OpenTabs config folder (holds the secret); it cannot be uploaded`, { category: 'auth' });
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
  if (!objectId) throw new ToolError('internal', 'Could not make a file input to check the files', { category: 'internal' });
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
    if (files.length !== paths.length) throw new ToolError('not_found', `Chrome took ${files.length} of the ${paths.length} files; check the paths`, { category: 'not_found' });
    files.forEach((f, i) => {
      if (f.error) throw new ToolError('not_found', `Cannot read "${paths[i]}" (${f.error}): it does not exist, is a folder or is not readable`, { category: 'not_found' });
    });
    return files.map(({ name, size }) => ({ name, size }));
  } finally {
    await send('Runtime.releaseObject', { objectId }).catch(() => {});
  }
}

export const uploadTools = {
  async browser_upload_file(input) {
    checkPaths(input.paths);
    const tab = await getTab(input.tabId);
    const tabId = tab.id!;
    const what = input.ref ?? input.selector;
    const files = await withDebugger(tabId, async (send) => {
      const { el, mark } = await markElement(tabId, input.selector, input.ref);
      // Taken at once: the mark comes off the element whatever happens next.
      const objectId = await markedObject(send, mark);
      if (el.tag !== 'input' || el.type !== 'file') {
        throw new ToolError('invalid_arguments', `${what} is a <${el.tag}${el.type ? ` type=${el.type}` : ''}>, not an <input type=file>`, { category: 'validation' });
      }
      if (input.paths.length > 1 && !el.multiple) {
        throw new ToolError('invalid_arguments', `${what} takes one file (it has no \`multiple\`); pass one path`, { category: 'validation' });
      }
      const probed = await probeFiles(send, input.paths);
      await send('DOM.setFileInputFiles', { files: [...input.paths], objectId });
      return probed;
    });
    return { value: { uploaded: files.length, files } };
  },
} satisfies Partial<Handlers>;
