/**
 * A token bucket: at most `burst` tokens, refilled at `perSecond`. Every rate a page or a plugin is
 * held to in the extension (page-tool lists and their bytes, plugin log lines and characters,
 * progress reports) is one of these, so the arithmetic is written once. Plain data and Date.now():
 * it runs in the service worker and in the tab bridge alike.
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly burst: number,
    readonly perSecond: number,
    now = Date.now(),
  ) {
    this.tokens = burst;
    this.at = now;
  }

  /**
   * The tokens held at `now`, refilled up to `burst`. A clock set back (Date.now() is the wall
   * clock) refills nothing instead of draining the bucket for as long as it went back; set forward,
   * it refills at most `burst`.
   */
  level(now = Date.now()): number {
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.at) / 1000) * this.perSecond);
    this.at = now;
    return this.tokens;
  }

  /** Milliseconds until `cost` tokens are held (0: they are now). */
  waitMs(cost = 1, now = Date.now()): number {
    const level = this.level(now);
    return level >= cost ? 0 : Math.ceil(((cost - level) / this.perSecond) * 1000);
  }

  /** Spends `cost` tokens; the caller saw them held (level / waitMs). */
  take(cost = 1): void {
    this.tokens -= cost;
  }
}
