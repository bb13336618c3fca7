/**
 * The network group: record a tab's requests and WebSocket frames through the DevTools protocol
 * (Network domain) between browser_enable_network_capture and browser_disable_network_capture.
 *
 * Recording holds a debugger session on the tab (one withDebugger call that only returns when
 * capture stops), so other debugger tools share that session meanwhile. State lives in the
 * service worker and is bounded: the newest maxRequests requests, WEBSOCKET_FRAMES_MAX frames and
 * CAPTURE_STORED_FRAME_CHARS of their payloads, URLs and headers cut (network-records.ts),
 * bodies and payloads cut at CAPTURE_BODY_MAX_BYTES. The tab closing, the user cancelling the
 * debugging bar, or DevTools taking over ends the capture and frees everything.
 *
 * Parts: network-records.ts (what is kept), network-capture.ts (recording), network-har.ts (what
 * the tools return); this file holds the tools.
 */
import { ToolError } from '../shared/tool-error.ts';
import { guardTab } from './cdp-events.ts';
import type { Handlers } from './types.ts';
import { awayNote, captureOf, captures, settings, settle, startCapture } from './network-capture.ts';
import { siteOf } from './url-policy.ts';
import { bodyBudget, harEntry, summary } from './network-har.ts';
import { enforceMax, forget, urlMatches } from './network-records.ts';

const whileOn = (site: string) =>
  `Records while the tab shows ${site}; requests made while it shows another site are not recorded, only counted (skippedWhileAway). To record another site, enable capture again once the tab shows it.`;

export const networkTools = {
  async browser_enable_network_capture(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    // The site of the page this call was allowed on (for an approved call, the approved site).
    const site = siteOf(tab.url || tab.pendingUrl || '');
    const existing = captures.get(tabId);
    if (existing) {
      // Re-enabling changes the settings for what comes next (the site too); what was recorded stays.
      existing.site = site;
      if (input.urlFilter !== undefined) existing.urlFilter = input.urlFilter;
      if (input.maxRequests !== undefined) existing.maxRequests = input.maxRequests;
      if (input.captureBodies !== undefined) existing.captureBodies = input.captureBodies === true;
      enforceMax(existing);
      return { value: { tabId, capturing: true, alreadyCapturing: true, ...settings(existing), recorded: existing.requests.size, note: whileOn(site) } };
    }
    const c = await guardTab(tabId, () => startCapture(tabId, input, site));
    // Cancelled or timed out while a busy page held it up: no capture the caller was told failed.
    if (ctx.signal.aborted) c.stop();
    ctx.signal.throwIfAborted();
    return { value: { tabId, capturing: true, alreadyCapturing: false, ...settings(c), recorded: 0, note: whileOn(site) } };
  },

  async browser_get_network_requests(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const c = captureOf(tab.id!);
    await settle(c);
    const filter = input.urlFilter ?? null;
    const take = input.includeBodies === true ? bodyBudget() : null;
    const picked = [...c.requests.entries()].filter(([, rec]) => urlMatches(rec.url, filter));
    const requests = picked.map(([, rec]) => summary(rec, take));
    if (input.clear === true) for (const [key, rec] of picked) if (rec.state !== 'pending') forget(c, key);
    return { value: { tabId: tab.id, capture: settings(c), count: requests.length, dropped: c.dropped, ...awayNote(c), requests } };
  },

  async browser_get_network_request(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const c = captureOf(tab.id!);
    await settle(c);
    const id = String(input.requestId);
    // A redirect chain shares one requestId: its hops, oldest first; the last is the final answer.
    const hops = [...c.requests.values()].filter((r) => r.requestId === id);
    if (hops.length === 0) throw new ToolError(`No recorded request ${id} in tab ${tab.id}; list them with browser_get_network_requests`, { code: 'not_found', category: 'not_found' });
    const take = bodyBudget();
    return { value: { tabId: tab.id, ...summary(hops[hops.length - 1]!, take), ...(hops.length > 1 ? { redirectedFrom: hops.slice(0, -1).map((r) => r.url) } : {}) } };
  },

  async browser_get_websocket_frames(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const c = captureOf(tab.id!);
    const frames = [...c.frames];
    if (input.clear === true) {
      c.frames.length = 0;
      c.frameChars = 0;
    }
    return { value: { tabId: tab.id, count: frames.length, dropped: c.framesDropped, openSockets: [...c.sockets.values()], frames } };
  },

  async browser_export_har(input, env) {
    const tab = await env.tab(input.tabId);
    const c = captureOf(tab.id!);
    await settle(c);
    const take = bodyBudget();
    const har = {
      log: {
        version: '1.2',
        creator: { name: 'OpenTabs', version: env.version },
        pages: [],
        entries: [...c.requests.values()].filter((r) => r.state !== 'pending').map((r) => harEntry(r, take)),
        comment: `Recorded from tab ${tab.id} on ${c.site} since ${new Date(c.since).toISOString()}${c.dropped ? `; ${c.dropped} older requests were dropped (maxRequests ${c.maxRequests})` : ''}${c.skippedAway ? `; ${c.skippedAway} requests made while the tab showed another site were not recorded` : ''}`,
      },
    };
    return { value: har };
  },

  async browser_disable_network_capture(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const c = captures.get(tab.id!);
    if (!c) return { value: { tabId: tab.id, capturing: false, wasCapturing: false } };
    const recorded = c.requests.size;
    await c.send('Network.disable').catch(() => {});
    c.stop();
    await c.released;
    return { value: { tabId: tab.id, capturing: false, wasCapturing: true, discarded: recorded } };
  },
} satisfies Partial<Handlers>;
