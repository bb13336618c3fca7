/**
 * browser_emulate: make a tab look like another device or place — viewport and device metrics,
 * user agent, geolocation, timezone, locale, color scheme and reduced motion, network and CPU
 * throttling — through the DevTools Emulation domain. Overrides live as long as the debugger
 * session, so an emulating tab holds one (like network capture) until `reset` ends it, the tab
 * closes, the extension loses its connection to the server (endAllEmulation: no agent is left
 * to reset what it set on the user's tab), or the MCP sessions that set it have ended and no call
 * of no session (REST) did (session-owned.ts); every call returns what is now in effect. Ending clears
 * every override at once: the tab's debugger session can outlive it (network capture, another
 * tool), and the overrides would hold as long as it does.
 *
 * CPU throttling, timezone and locale are applied by Chrome to the tab's whole renderer process,
 * so to every tab sharing it (a tab opened from it, another tab of the site): they are refused
 * while another tab shares the process, and end when one comes to share it (PROCESS_WIDE).
 */
import { ToolError } from '../shared/tool-error.ts';
import type { CdpSend } from './debugger.ts';
import { holdDebugger } from './held-debugger.ts';
import { endedSession, Makers, onSessionEnded } from './session-owned.ts';
import type { Handlers } from './types.ts';

/** DevTools' own presets (download/upload in bytes per second, latency in ms). */
const NETWORK_PRESETS: Record<string, { offline: boolean; latency: number; downloadThroughput: number; uploadThroughput: number }> = {
  offline: { offline: true, latency: 0, downloadThroughput: 0, uploadThroughput: 0 },
  'slow-3g': { offline: false, latency: 400, downloadThroughput: (400 * 1024) / 8, uploadThroughput: (400 * 1024) / 8 },
  'fast-3g': { offline: false, latency: 150, downloadThroughput: (1.6 * 1024 * 1024) / 8, uploadThroughput: (750 * 1024) / 8 },
  none: { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 },
};

interface Held {
  send: CdpSend;
  release: () => void;
  active: Record<string, unknown>;
  /** Stops watching other tabs join the process (watchProcess). */
  unwatch: () => void;
  /** The sessions whose calls set the tab's overrides. */
  makers: Makers;
}

/** Overrides Chrome applies to the tab's whole renderer process, and so to every tab in it. */
const PROCESS_WIDE = ['cpuThrottling', 'timezone', 'locale'] as const;

const hasProcessWide = (h: Held) => PROCESS_WIDE.some((k) => k in h.active);

/** The renderer process of tab `tabId`'s page, or null when unknown. */
async function processOf(tabId: number): Promise<number | null> {
  const f = ((await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? []).find((x) => x.frameId === 0);
  return typeof f?.processId === 'number' && f.processId >= 0 ? f.processId : null;
}

/** Other tabs with a frame in tab `tabId`'s renderer process. */
async function tabsSharingProcess(tabId: number): Promise<number[]> {
  const p = await processOf(tabId);
  if (p === null) return [];
  const out: number[] = [];
  for (const t of await chrome.tabs.query({})) {
    if (t.id === undefined || t.id === tabId) continue;
    const frames = (await chrome.webNavigation.getAllFrames({ tabId: t.id }).catch(() => null)) ?? [];
    if (frames.some((f) => f.processId === p)) out.push(t.id);
  }
  return out;
}

/** CPU throttling, timezone and locale back to the browser's own, told once to the next call. */
async function endProcessWide(tabId: number, h: Held, why: string): Promise<void> {
  if (!hasProcessWide(h)) return;
  for (const k of PROCESS_WIDE) delete h.active[k];
  endedNotes.set(tabId, `CPU throttling, timezone and locale emulation of tab ${tabId} ended when ${why} (Chrome applies them to every tab in that process); the rest stays in effect.`);
  await h.send('Emulation.setCPUThrottlingRate', { rate: 1 }).catch(() => {});
  await h.send('Emulation.setTimezoneOverride', { timezoneId: '' }).catch(() => {});
  await h.send('Emulation.setLocaleOverride', {}).catch(() => {});
}

/**
 * While process-wide overrides are in effect on tab `tabId`: a page of another tab committing in
 * its renderer process (a tab it opened, another tab of the site), or the tab itself moving to a
 * process another tab shares, ends them.
 */
function watchProcess(tabId: number, h: Held): () => void {
  const onCommitted = (d: { tabId: number; frameId: number; processId: number }) => {
    if (!hasProcessWide(h) || held.get(tabId) !== h) return;
    if (d.tabId === tabId && d.frameId !== 0) return;
    void (async () => {
      const others = await tabsSharingProcess(tabId);
      if (others.length) await endProcessWide(tabId, h, `tab ${others[0]} came to share its renderer process`);
    })();
  };
  chrome.webNavigation.onCommitted.addListener(onCommitted);
  return () => chrome.webNavigation.onCommitted.removeListener(onCommitted);
}
const held = new Map<number, Held>();
/** Why a tab's emulation ended by itself, told once to the next call on it. */
const endedNotes = new Map<number, string>();

/** Every override back to the browser's own (Chrome keeps them while the session lasts, whoever holds it). */
async function clearOverrides(send: CdpSend): Promise<void> {
  await send('Emulation.clearDeviceMetricsOverride').catch(() => {});
  await send('Emulation.setUserAgentOverride', { userAgent: '' }).catch(() => {});
  await send('Emulation.clearGeolocationOverride').catch(() => {});
  await send('Emulation.setTimezoneOverride', { timezoneId: '' }).catch(() => {});
  await send('Emulation.setLocaleOverride', {}).catch(() => {});
  await send('Emulation.setEmulatedMedia', { media: '', features: [] }).catch(() => {});
  await send('Network.emulateNetworkConditions', NETWORK_PRESETS.none).catch(() => {});
  await send('Emulation.setCPUThrottlingRate', { rate: 1 }).catch(() => {});
}

async function end(tabId: number, h: Held): Promise<void> {
  held.delete(tabId);
  h.unwatch();
  await clearOverrides(h.send);
  h.release();
}

/**
 * Ends the emulation of every tab (the extension lost its connection to the server: the agent
 * that set it can no longer reset it, and the user's tab would stay changed with nothing saying
 * so but Chrome's debugging bar).
 */
export async function endAllEmulation(why: string): Promise<void> {
  await Promise.all([...held].map(([tabId, h]) => {
    endedNotes.set(tabId, `The emulation of tab ${tabId} ended when ${why}; set it again if still needed.`);
    return end(tabId, h);
  }));
}

/** MCP session `session` ended: the emulation of each tab only it (and no REST call) set ends. */
function sessionGone(tabId: number, session: string): Promise<void> {
  const h = held.get(tabId);
  if (!h || !h.makers.drop(session)) return Promise.resolve();
  endedNotes.set(tabId, `The emulation of tab ${tabId} ended when the MCP session that set it ended; set it again if still needed.`);
  return end(tabId, h);
}
onSessionEnded((session) => {
  for (const tabId of [...held.keys()]) void sessionGone(tabId, session).catch(() => {});
});

async function hold(tabId: number): Promise<Held> {
  const existing = held.get(tabId);
  if (existing) return existing;
  const session = await holdDebugger(tabId, () => {
    if (held.get(tabId) === h) held.delete(tabId);
    h.unwatch();
  });
  const h: Held = { send: session.send, release: session.release, active: {}, unwatch: () => {}, makers: new Makers() };
  h.unwatch = watchProcess(tabId, h);
  held.set(tabId, h);
  return h;
}

export const emulationTools = {
  async browser_emulate(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    const ended = endedNotes.get(tabId);
    endedNotes.delete(tabId);
    if (input.reset === true) {
      const h = held.get(tabId);
      if (h) await end(tabId, h);
      return { value: { tabId, reset: true, active: {}, ...(ended ? { note: ended } : {}) } };
    }
    if (input.cpuThrottling !== undefined || input.timezone !== undefined || input.locale !== undefined) {
      const others = await tabsSharingProcess(tabId);
      if (others.length) {
        throw new ToolError(
          `cpuThrottling, timezone and locale apply to Chrome's whole renderer process, which tab ${tabId} shares with ${others.length === 1 ? 'tab' : 'tabs'} ${others.join(', ')} (opened from it, or of the same site): they would change too. Emulate them in a tab of its own (browser_open_tab), or close the other tabs; nothing was changed`,
          { code: 'not_available', category: 'validation' },
        );
      }
    }
    const fresh = !held.has(tabId);
    const h = await hold(tabId);
    // Recorded before the first override: a call that fails halfway has still changed the tab.
    h.makers.add(ctx.session);
    const send = h.send;
    try {
      const vp = input.viewport as { width: number; height: number; deviceScaleFactor?: number; mobile?: boolean } | undefined;
      if (vp) {
        await send('Emulation.setDeviceMetricsOverride', { width: vp.width, height: vp.height, deviceScaleFactor: vp.deviceScaleFactor ?? 0, mobile: vp.mobile === true });
        h.active.viewport = vp;
      }
      if (input.userAgent !== undefined) {
        await send('Emulation.setUserAgentOverride', { userAgent: String(input.userAgent) });
        h.active.userAgent = input.userAgent;
      }
      const geo = input.geolocation as { latitude: number; longitude: number; accuracy?: number } | undefined;
      if (geo) {
        await send('Emulation.setGeolocationOverride', { latitude: geo.latitude, longitude: geo.longitude, accuracy: geo.accuracy ?? 50 });
        h.active.geolocation = geo;
      }
      if (input.timezone !== undefined) {
        await send('Emulation.setTimezoneOverride', { timezoneId: String(input.timezone) });
        h.active.timezone = input.timezone;
      }
      if (input.locale !== undefined) {
        await send('Emulation.setLocaleOverride', { locale: String(input.locale) });
        h.active.locale = input.locale;
      }
      const features: { name: string; value: string }[] = [];
      if (input.colorScheme !== undefined) features.push({ name: 'prefers-color-scheme', value: String(input.colorScheme) });
      if (input.reducedMotion !== undefined) features.push({ name: 'prefers-reduced-motion', value: String(input.reducedMotion) });
      if (features.length) {
        await send('Emulation.setEmulatedMedia', { features });
        for (const f of features) h.active[f.name] = f.value;
      }
      if (input.network !== undefined) {
        await send('Network.enable').catch(() => {});
        await send('Network.emulateNetworkConditions', NETWORK_PRESETS[String(input.network)]!);
        h.active.network = input.network;
      }
      if (input.cpuThrottling !== undefined) {
        await send('Emulation.setCPUThrottlingRate', { rate: input.cpuThrottling });
        h.active.cpuThrottling = input.cpuThrottling;
      }
    } catch (err) {
      // A session this call began is let go (its detach ends any override set before the refusal):
      // it held the tab's debugger, with Chrome's debugging bar, and no emulation, until reset.
      if (fresh && held.get(tabId) === h) await end(tabId, h);
      throw new ToolError(`Chrome refused the emulation${fresh ? ' (nothing is emulated)' : ''}: ${(err as Error).message}`, { code: 'invalid_arguments', category: 'validation' });
    } finally {
      // The call's MCP session ended while it ran (session.ended came before this change).
      if (endedSession(ctx.session)) await sessionGone(tabId, ctx.session);
    }
    // The tab's emulation ended while this call ran (reset, its MCP session's end, the server
    // lost): the overrides it set after that are undone too, or they would hold, untracked, as
    // long as the debugger session does.
    if (!held.has(tabId)) await clearOverrides(send);
    // Cancelled or timed out while a busy page held the commands up: the caller was told it
    // failed, so a session this call began is let go (its detach ends the overrides).
    if (ctx.signal.aborted && fresh && held.get(tabId) === h) await end(tabId, h);
    ctx.signal.throwIfAborted();
    if (held.get(tabId) !== h) {
      throw new ToolError(`The emulation of tab ${tabId} ended while this call ran (${endedNotes.get(tabId) ?? 'it was reset, or the debugger left the tab'}); nothing is emulated by it. Try again`, { code: 'not_available', category: 'validation', retryable: true });
    }
    return { value: { tabId, active: h.active, note: `${ended ? `${ended} ` : ''}In effect until browser_emulate with reset: true${ctx.session !== undefined ? ', the tab closes, or every MCP session that emulated on this tab has ended.' : ' (or the tab closes).'}` } };
  },
} satisfies Partial<Handlers>;
