/**
 * Tool calls in flight, for a clean shutdown: once stopping, new calls are refused with
 * `server_shutting_down`, and stop() waits (bounded) until the running ones have answered their
 * callers before it closes connections — so a client sees a proper error, not a reset socket.
 */
export class InFlightCalls {
  private n = 0;
  private idleWaiters: Array<() => void> = [];
  /** Set by stop(): callTool refuses new calls from here on. */
  stopping = false;

  get count(): number {
    return this.n;
  }

  enter(): void {
    this.n++;
  }

  leave(): void {
    this.n = Math.max(0, this.n - 1);
    if (this.n === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves true when no call is in flight, or false after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.n === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== onIdle);
        done(false);
      }, timeoutMs);
      const onIdle = () => done(true);
      this.idleWaiters.push(onIdle);
    });
  }
}
