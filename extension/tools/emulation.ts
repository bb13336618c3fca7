/**
 * browser_emulate: make a tab look like another device or place — viewport and device metrics,
 * user agent, geolocation, timezone, locale, color scheme and reduced motion, network and CPU
 * throttling — through the DevTools Emulation domain. Overrides live as long as the debugger
 * session, so an emulating tab holds one (like network capture) until `reset` ends it, or the tab
 * closes; every call returns what is now in effect.
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
    if (input.reset === true) {
      const h = held.get(tabId);
      if (h) {
        // Detaching clears every override; say so to the page at once rather than on the idle detach.
        await h.send('Emulation.clearDeviceMetricsOverride').catch(() => {});
        await h.send('Emulation.setEmulatedMedia', { media: '', features: [] }).catch(() => {});
        await h.send('Network.emulateNetworkConditions', NETWORK_PRESETS.none).catch(() => {});
        await h.send('Emulation.setCPUThrottlingRate', { rate: 1 }).catch(() => {});
        held.delete(tabId);
        h.release();
      }
      return { value: { tabId, reset: true, active: {} } };
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
    return { value: { tabId, active: h.active, note: 'In effect until browser_emulate with reset: true (or the tab closes).' } };
  },
} satisfies Partial<Handlers>;
