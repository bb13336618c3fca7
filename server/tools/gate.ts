/**
 * Per-plugin concurrency gate: at most N calls in flight per plugin. The next one is refused at
 * once (never queued), so a client learns to wait instead of piling up work in a web app.
 */
export class ConcurrencyGate {
  private inFlight = new Map<string, number>();

  /** Take a slot; returns a release function, or null when the plugin is at its limit. */
  tryAcquire(key: string, limit: number): (() => void) | null {
    const n = this.inFlight.get(key) ?? 0;
    if (n >= limit) return null;
    this.inFlight.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const m = (this.inFlight.get(key) ?? 1) - 1;
      if (m <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, m);
    };
  }

  count(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }
}
