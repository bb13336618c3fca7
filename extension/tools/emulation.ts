/**
 * browser_emulate: make a tab look like another device or place — viewport and device metrics,
 * user agent, geolocation, timezone, locale, color scheme and reduced motion, network and CPU
 * throttling — through the DevTools Emulation domain. Overrides live as long as the debugger
 * session, so an emulating tab holds one (like network capture) until `reset` ends it, the tab
 * closes, or the extension loses its connection to the server (endAllEmulation: no agent is left
 * to reset what it set on the user's tab); every call returns what is now in effect. Ending clears
 * every override at once: the tab's debugger session can outlive it (network capture, another
 * tool), and the overrides would hold as long as it does.
 */
import { ToolError } from '../shared/tool-error.ts';
import type { CdpSend } from './debugger.ts';
import { holdDebugger } from './held-debugger.ts';
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

async function hold(tabId: number): Promise<Held> {
  const existing = held.get(tabId);
  if (existing) return existing;
  const session = await holdDebugger(tabId, () => held.delete(tabId));
  const h: Held = { send: session.send, release: session.release, active: {} };
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
    const fresh = !held.has(tabId);
    const h = await hold(tabId);
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
      if (fresh && held.get(tabId) === h) {
        held.delete(tabId);
        h.release();
      }
      throw new ToolError(`Chrome refused the emulation${fresh ? ' (nothing is emulated)' : ''}: ${(err as Error).message}`, { code: 'invalid_arguments', category: 'validation' });
    }
    // Cancelled or timed out while a busy page held the commands up: the caller was told it
    // failed, so a session this call began is let go (its detach ends the overrides).
    if (ctx.signal.aborted && fresh && held.get(tabId) === h) {
      held.delete(tabId);
      h.release();
    }
    ctx.signal.throwIfAborted();
    return { value: { tabId, active: h.active, note: `${ended ? `${ended} ` : ''}In effect until browser_emulate with reset: true (or the tab closes).` } };
  },
} satisfies Partial<Handlers>;
