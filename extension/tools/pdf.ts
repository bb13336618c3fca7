/**
 * browser_print_pdf: a tab printed to PDF as Chrome prints it (Page.printToPDF), returned as a
 * file (DispatchResult.resources → MCP embedded resource, REST `resources`). A PDF over
 * PDF_MAX_BYTES (it must fit in one frame to the server, as base64) is refused, naming pageRanges.
 */
import { PDF_MAX_BYTES } from '../../server/protocol/limits.ts';
import { ToolError } from '../shared/tool-error.ts';
import { serialPerTab } from './cdp-events.ts';
import { withDebugger } from './debugger.ts';
import { captureHidingForeignUi } from './capture-foreign-ui.ts';
import { checkedCapture } from './secret-on-page.ts';
import type { Handlers } from './types.ts';

const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;

/** Bytes a base64 string decodes to. */
export function base64Bytes(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}

/** Pages of a PDF Chrome wrote (its page objects, /Type /Page); null when none are found. */
function countPages(b64: string): number | null {
  try {
    const n = (atob(b64).match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
    return n > 0 ? n : null;
  } catch {
    return null;
  }
}

export const pdfTools = {
  async browser_print_pdf(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    const params = {
      landscape: input.landscape ?? false,
      printBackground: input.printBackground ?? false,
      scale: input.scale ?? 1,
      ...(input.pageRanges !== undefined ? { pageRanges: input.pageRanges.replace(/\s+/g, '') } : {}),
      transferMode: 'ReturnAsBase64',
    };
    // Not of a page showing the secret or a frame the tools may not use, before, during or after
    // printing, nor with other extensions' own controls drawn in it (captureHidingForeignUi).
    const data = await checkedCapture(tabId, 'PDF', () => captureHidingForeignUi(tabId, 'PDF', async () => {
      try {
        // One print at a time per tab: Chrome leaves a second Page.printToPDF sent while one runs unanswered.
        return (await serialPerTab('print', tabId, () => withDebugger(tabId, (send) => send<{ data: string }>('Page.printToPDF', params)))).data;
      } catch (err) {
        if (err instanceof ToolError) throw err;
        const msg = (err as Error).message ?? String(err);
        if (/page range/i.test(msg)) throw new ToolError(`pageRanges "${input.pageRanges}" does not fit the document: ${msg}`, { code: 'invalid_arguments', category: 'validation' });
        throw new ToolError(`Chrome could not print tab ${tabId} to PDF: ${msg}`, { code: 'internal', category: 'internal' });
      }
    }));
    const bytes = base64Bytes(data);
    if (bytes > PDF_MAX_BYTES) {
      throw new ToolError(`The PDF is ${mb(bytes)}, over the ${mb(PDF_MAX_BYTES)} limit; print fewer pages with pageRanges (e.g. "1-5"), or a smaller scale or without printBackground`, { code: 'result_too_large', category: 'validation' });
    }
    const pages = countPages(data);
    const uri = `opentabs://tabs/${tabId}/print.pdf`;
    return {
      value: { uri, mimeType: 'application/pdf', bytes, ...(pages !== null ? { pages } : {}), url: tab.url ?? '', title: tab.title ?? '' },
      resources: [{ uri, mimeType: 'application/pdf', blob: data }],
    };
  },
} satisfies Partial<Handlers>;
