/**
 * /health's auditSummary.last24h, counted truthfully: every recorded call goes into a per-minute
 * bucket (at most 1,441 live), so the figure does not depend on how many entries the in-memory
 * ring keeps. At start-up the buckets are filled from audit.log and audit.log.1 in the background
 * (start-up does not wait for a 20 MB scan); the window is exact to the minute.
 */
import { forEachLineFromEnd } from './audit-tail.ts';

const MINUTE_MS = 60_000;
export const DAY_MS = 24 * 60 * MINUTE_MS;
/**
 * Entries are appended when a call ends but stamped when it started, so the file is ordered
 * only roughly: keep reading this far past the 24 h boundary before stopping.
 */
const ORDER_SLACK_MS = 15 * MINUTE_MS;

export interface DayCounts {
  total: number;
  success: number;
  failure: number;
}

export class DayCounter {
  private buckets = new Map<number, { success: number; failure: number }>();

  add(timestampMs: number, success: boolean): void {
    if (!Number.isFinite(timestampMs)) return;
    const minute = Math.floor(timestampMs / MINUTE_MS);
    let b = this.buckets.get(minute);
    if (!b) this.buckets.set(minute, (b = { success: 0, failure: 0 }));
    if (success) b.success++;
    else b.failure++;
  }

  /** Calls whose timestamp falls in the last 24 hours (to the minute); drops older buckets. */
  counts(now: number = Date.now()): DayCounts {
    const oldest = Math.floor((now - DAY_MS) / MINUTE_MS);
    const out = { total: 0, success: 0, failure: 0 };
    for (const [minute, b] of this.buckets) {
      if (minute < oldest) {
        this.buckets.delete(minute);
        continue;
      }
      out.success += b.success;
      out.failure += b.failure;
    }
    out.total = out.success + out.failure;
    return out;
  }
}

/**
 * Add the entries of the last 24 hours found in the audit files to `counter`: the current file up
 * to `currentEndOffset` (what was there before this process appended anything), then the rotated
 * generation. Malformed lines are skipped.
 */
export async function countLastDayFromFiles(
  counter: DayCounter,
  currentPath: string,
  currentEndOffset: number,
  now: number = Date.now(),
  readRotated: () => boolean = () => true,
): Promise<void> {
  const since = now - DAY_MS;
  let tooOld = false;
  const visit = (line: string): boolean => {
    let e: { timestamp?: unknown; success?: unknown };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      return true;
    }
    const t = typeof e?.timestamp === 'string' ? Date.parse(e.timestamp) : NaN;
    if (!Number.isFinite(t)) return true;
    if (t < since - ORDER_SLACK_MS) {
      tooOld = true;
      return false;
    }
    if (t >= since && t <= now) counter.add(t, e.success === true);
    return true;
  };
  await forEachLineFromEnd(currentPath, visit, currentEndOffset);
  if (!tooOld && readRotated()) await forEachLineFromEnd(`${currentPath}.1`, visit);
}
