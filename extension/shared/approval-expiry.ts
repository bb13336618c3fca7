/**
 * When an approval card stops being shown. The server's `expiresAt` is on the server's wall clock:
 * compared with this browser's Date.now(), a browser clock ahead of the server's (or set forward
 * while the card waits) hid cards the server still waited for, and the call timed out unseen. The
 * server also sends `remainingMs` (what it still waits as it sends the card): the card's deadline
 * is counted from when the worker received it, on the monotonic clock (performance.now()). Only a
 * card from a server that does not send it falls back to `expiresAt` against the wall clock.
 */
import type { PendingConfirmation } from './panel-protocol.ts';

/** The clocks a deadline is counted on; injected in tests. */
export interface ExpiryClock {
  /** Monotonic milliseconds (performance.now()). */
  mono(): number;
  /** Wall clock milliseconds (Date.now()). */
  wall(): number;
}

export const systemClock: ExpiryClock = { mono: () => performance.now(), wall: () => Date.now() };

/**
 * The card's deadline on `clock.mono()`: `remainingMs` from now, less `ageMs` (how long ago, on
 * this browser's wall clock, `remainingMs` was measured: a card kept in storage across a worker
 * restart). Without `remainingMs`: `expiresAt` against the wall clock.
 */
export function approvalDeadline(p: Pick<PendingConfirmation, 'expiresAt' | 'remainingMs'>, clock: ExpiryClock, ageMs = 0): number {
  const left = typeof p.remainingMs === 'number' && Number.isFinite(p.remainingMs) ? p.remainingMs - Math.max(0, ageMs) : p.expiresAt - clock.wall();
  return clock.mono() + left;
}

/** Whether a card with this deadline (approvalDeadline) is still waiting. */
export function approvalWaiting(deadline: number, clock: ExpiryClock): boolean {
  return deadline > clock.mono();
}
