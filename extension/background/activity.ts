/**
 * What the agent is doing, for the side panel: every call the extension runs (built-in, plugin
 * and page tools), with its tab, progress and elapsed time while it runs, and the last
 * ACTIVITY_HISTORY_SIZE finished ones with status, duration and error. A running call can be
 * stopped from the panel: the tool's signal is aborted (plugin and page tools get `cancel`) and
 * the server gets a `cancelled` error at once. The action icon's badge counts running calls (and,
 * when any, waiting approvals take precedence, see main.ts).
 */
import { ToolError } from '../shared/tool-error.ts';
import type { ActivityCall, ActivityDone } from '../shared/panel-protocol.ts';
import { SECRET_MASK, maskSecrets } from '../../server/protocol/secret-values.ts';

export const ACTIVITY_HISTORY_SIZE = 50;
/**
 * Characters of an arguments summary. Secret values (a password, a token, a PIN, a card number…:
 * server/protocol/secret-values.ts, the rule plugin drafts redact by) are masked.
 */
const ARGS_SUMMARY_CHARS = 400;

export function summarizeArgs(input: unknown): string {
  const masked = JSON.stringify(maskSecrets(input ?? {}, SECRET_MASK));
  return masked.length > ARGS_SUMMARY_CHARS ? `${masked.slice(0, ARGS_SUMMARY_CHARS - 1)}…` : masked;
}

interface Running extends ActivityCall {
  stop: (reason: string) => void;
}

export class Activity {
  private running = new Map<string, Running>();
  private history: ActivityDone[] = [];
  private listeners = new Set<() => void>();

  onChange(cb: () => void): void {
    this.listeners.add(cb);
  }

  private changed(): void {
    for (const cb of this.listeners) cb();
  }

  snapshot(): { running: ActivityCall[]; history: ActivityDone[] } {
    return { running: [...this.running.values()].map(({ stop: _stop, ...c }) => c), history: [...this.history] };
  }

  /** Tabs with a call running on them now (the panel highlights them). */
  busyTabs(): Set<number> {
    const out = new Set<number>();
    for (const c of this.running.values()) if (c.tabId !== undefined) out.add(c.tabId);
    return out;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Run one dispatch under watch. `cancel` tells the tool's own runtime to stop (plugin/page
   * tools); the returned promise rejects with `cancelled` as soon as the panel's Stop is pressed.
   */
  track<T>(
    call: { dispatchId: string; tool: string; plugin: string; input: unknown; tabId?: number },
    run: () => Promise<T>,
    cancel: (reason: string) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const entry: Running = {
        dispatchId: call.dispatchId,
        tool: call.tool,
        plugin: call.plugin,
        startedAt: Date.now(),
        args: summarizeArgs(call.input),
        ...(call.tabId !== undefined ? { tabId: call.tabId } : {}),
        stop: (reason) => {
          if (done) return;
          cancel(reason);
          finish('cancelled', new ToolError(`Stopped by the user in the OpenTabs side panel (${reason})`, { code: 'cancelled', category: 'internal' }));
        },
      };
      const finish = (status: ActivityDone['status'], err: unknown, value?: T) => {
        if (done) return;
        done = true;
        this.running.delete(call.dispatchId);
        // entry was updated in place by setTab() and progress() while the call ran.
        const { stop: _stop, ...rest } = entry;
        const ended = Date.now();
        this.history.unshift({
          ...rest,
          endedAt: ended,
          durationMs: ended - rest.startedAt,
          status,
          ...(err ? { error: err instanceof Error ? err.message : String(err) } : {}),
        });
        if (this.history.length > ACTIVITY_HISTORY_SIZE) this.history.length = ACTIVITY_HISTORY_SIZE;
        this.changed();
        if (status === 'ok') resolve(value as T);
        else reject(err);
      };
      this.running.set(call.dispatchId, entry);
      this.changed();
      run().then(
        (v) => finish('ok', null, v),
        (e) => finish((e as { code?: string })?.code === 'cancelled' ? 'cancelled' : 'error', e),
      );
    });
  }

  /** The tab a call runs in, once the runtime picked it. */
  setTab(dispatchId: string, tabId: number, title?: string, url?: string): void {
    const c = this.running.get(dispatchId);
    if (!c) return;
    c.tabId = tabId;
    if (title !== undefined) c.tabTitle = title;
    if (url !== undefined) {
      const origin = this.originOf(url);
      if (origin !== undefined) c.origin = origin;
    }
    this.changed();
  }

  /** The last URL parsed and its origin: calls in a row mostly run in the same tab (new URL is not cheap). */
  private lastUrl: { url: string; origin: string | undefined } | null = null;

  private originOf(url: string): string | undefined {
    if (this.lastUrl?.url === url) return this.lastUrl.origin;
    let origin: string | undefined;
    try {
      origin = new URL(url).origin;
    } catch {}
    this.lastUrl = { url, origin };
    return origin;
  }

  progress(dispatchId: string, p: { progress: number; total?: number; message?: string }): void {
    const c = this.running.get(dispatchId);
    if (!c) return;
    c.progress = { progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) };
    this.changed();
  }

  /** The panel's Stop. False when the call already ended. */
  stop(dispatchId: string): boolean {
    const c = this.running.get(dispatchId);
    if (!c) return false;
    c.stop('Stop pressed');
    return true;
  }
}
