/**
 * Looking at a page the way a front-end developer does: the computed styles of one element, and
 * an accessibility audit of the common problems (images without text alternative, fields without
 * a label, buttons and links without a name, text whose contrast is below WCAG AA). The in-page
 * halves are stylesInPage and auditInPage in extension/page/reading.ts.
 */
import { ToolError } from '../shared/tool-error.ts';
import { pageFindError } from './acting.ts';
import { runInTab } from './reading.ts';
import type { Handlers } from './types.ts';

export const pageInspectTools = {
  async browser_get_styles(input, ctx) {
    if ((input.selector === undefined) === (input.ref === undefined)) throw new ToolError('Pass either selector or ref', { code: 'invalid_arguments', category: 'validation' });
    const tab = await ctx.tab(input.tabId);
    const r = await runInTab(tab.id!, 'stylesInPage', [input.selector ?? null, input.ref ?? null, input.properties ?? null], input.ref);
    if ('error' in r) throw pageFindError(String(r.error));
    return { value: r };
  },

  async browser_accessibility_audit(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    return { value: await runInTab(tab.id!, 'auditInPage', [input.limit ?? 100]) };
  },
} satisfies Partial<Handlers>;
