/**
 * A page tool asking for the user's input while it runs (WebMCP's requestUserInteraction): the
 * page has something to show the user (a confirmation of its own, a sign-in) before it goes on. It
 * is put to the user as an approval card is (confirmations.ts: the same side panel list, arming,
 * timeout, `opentabs approvals`), worded as a request for input: Continue (the extension then shows
 * the tab and lets the page go on) or Decline (the call fails). Nobody answering within the
 * approval timeout fails it too. A card whose call ended meanwhile is taken away.
 */
import { OpenTabsError } from '../errors.ts';
import type { ConfirmationDecision, ConfirmationRequest } from './confirmations.ts';

export type InteractionAnswer = 'continue' | 'decline' | 'timeout' | 'ended';

export class PageInteractions {
  /** dispatchId → aborts the card of that call (pageTools.interactionDone). */
  private open = new Map<string, AbortController>();

  constructor(private readonly ask: (req: ConfirmationRequest) => Promise<ConfirmationDecision>) {}

  async request(p: { dispatchId: string; tabId: number; url: string; origin: string; tool: string }): Promise<{ answer: InteractionAnswer }> {
    // One card per call at a time: a page asking again while its card waits replaces nothing.
    if (this.open.has(p.dispatchId)) throw new OpenTabsError('bad_request', `The page tool ${p.tool} already waits for the user's input`);
    const ac = new AbortController();
    this.open.set(p.dispatchId, ac);
    try {
      const d = await this.ask({
        tool: p.tool,
        plugin: `page:${p.origin}`,
        params: {},
        signal: ac.signal,
        // Counted apart from the agents' own calls: a page asking cannot fill their slots.
        caller: `page-interaction:${p.origin}`,
        target: { tabId: p.tabId, url: p.url, domain: p.origin },
        interaction: true,
      });
      return { answer: d.decision === 'allow' ? 'continue' : 'decline' };
    } catch (err) {
      if (ac.signal.aborted) return { answer: 'ended' };
      if (err instanceof OpenTabsError && err.code === 'approval_timeout') return { answer: 'timeout' };
      throw err;
    } finally {
      if (this.open.get(p.dispatchId) === ac) this.open.delete(p.dispatchId);
    }
  }

  /** The call ended (answered, cancelled, its tab gone): its card, if one waits, goes. */
  done(dispatchId: string): void {
    this.open.get(dispatchId)?.abort();
  }
}
