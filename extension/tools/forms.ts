/**
 * browser_fill_form: many fields in one call, done in the page (no debugger, so no debugging bar):
 * the value is set through the element's own property setter (what frameworks such as React
 * listen to), then input and change events fire as when a user edits the field (fillInPage in
 * extension/page/acting.ts).
 */
import { ToolError } from '../shared/tool-error.ts';
import { assertFrameReachable } from './frame-modal.ts';
import { frameOfRef } from './frame-ref.ts';
import { frameTarget } from './frames.ts';
import { runPage } from './page-run.ts';
import type { Handlers } from './types.ts';

export const formTools = {
  async browser_fill_form(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const fields = input.fields;
    // One script fills them all, in one document: the top page (selectors, eN refs) or one iframe (fFeN refs).
    const frameIds = [...new Set(fields.map((f) => frameOfRef(f.ref)))];
    if (frameIds.length > 1) {
      throw new ToolError('The fields are in different frames (refs fFeN name an iframe\'s element, selectors and eN refs the top page): fill each frame\'s fields in a call of its own', { code: 'invalid_arguments', category: 'validation' });
    }
    const firstRef = fields.find((f) => f.ref !== undefined)?.ref;
    const target = await frameTarget(tab.id!, frameIds[0] ?? 0, firstRef);
    // An iframe's fields are behind what its iframe is behind (a modal dialog of the page above).
    await assertFrameReachable(tab.id!, frameIds[0] ?? 0, firstRef, { subject: `fields[0]: ${firstRef}`, undone: 'nothing was filled', next: "Fill the dialog's own fields, or close it first (its close or cancel button with browser_click_element)" });
    // Nothing filled once the caller was told the call failed (a busy page held the script up).
    const r = await runPage(target, 'fillInPage', [fields], ctx.signal);
    if (!r) throw new ToolError(`Tab ${tab.id} cannot be scripted`, { code: 'not_available', category: 'validation' });
    if ('error' in r && r.error) {
      const filled = r.done.length ? ` (filled before it: ${r.done.map((d) => d.field).join(', ')})` : '';
      throw new ToolError(`${r.error}${filled}`, { code: r.code ?? 'invalid_arguments', category: r.code === 'not_found' ? 'not_found' : 'validation' });
    }
    return { value: { filled: r.done.length, fields: r.done } };
  },
} satisfies Partial<Handlers>;
