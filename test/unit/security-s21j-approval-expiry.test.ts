/**
 * Approval cards hidden by the browser's clock: the worker compared the server's expiresAt (the
 * server's wall clock) with its own Date.now(), so a browser clock ahead of the server's, or set
 * forward while a card waited, hid cards the server still waited for. The card's deadline is now
 * counted from when it was received, on the monotonic clock, with the server's remainingMs.
 * Injected clocks: the browser's own clock is not changed.
 */
import { expect, test } from 'bun:test';
import { approvalDeadline, approvalWaiting, type ExpiryClock } from '../../extension/shared/approval-expiry.ts';

function clock(mono: number, wall: number): ExpiryClock & { advance(ms: number): void; setWall(ms: number): void } {
  return {
    mono: () => mono,
    wall: () => wall,
    advance(ms) {
      mono += ms;
      wall += ms;
    },
    setWall(ms) {
      wall = ms;
    },
  };
}

const SERVER_NOW = 1_700_000_000_000;

test('a browser clock an hour ahead of the server does not hide a card still waiting', () => {
  const c = clock(5_000, SERVER_NOW + 3_600_000);
  const card = { expiresAt: SERVER_NOW + 120_000, remainingMs: 120_000 };
  const deadline = approvalDeadline(card, c);
  expect(approvalWaiting(deadline, c)).toBe(true);
  c.advance(119_000);
  expect(approvalWaiting(deadline, c)).toBe(true);
  c.advance(2_000);
  expect(approvalWaiting(deadline, c)).toBe(false);
});

test('a browser clock set forward while the card waits does not hide it', () => {
  const c = clock(5_000, SERVER_NOW);
  const deadline = approvalDeadline({ expiresAt: SERVER_NOW + 120_000, remainingMs: 120_000 }, c);
  c.setWall(SERVER_NOW + 86_400_000);
  expect(approvalWaiting(deadline, c)).toBe(true);
});

test('a card kept across a worker restart counts the time since it was saved on the browser clock', () => {
  // Saved with 60 s left, restored 50 s later (a new worker: its monotonic clock starts again).
  const c = clock(10, SERVER_NOW + 3_600_000);
  const deadline = approvalDeadline({ expiresAt: SERVER_NOW + 60_000, remainingMs: 60_000 }, c, 50_000);
  expect(approvalWaiting(deadline, c)).toBe(true);
  c.advance(11_000);
  expect(approvalWaiting(deadline, c)).toBe(false);
  // Saved 70 s ago: gone.
  expect(approvalWaiting(approvalDeadline({ expiresAt: 0, remainingMs: 60_000 }, c, 70_000), c)).toBe(false);
});

test("a card without remainingMs (the server's older wire format) is still accepted, on expiresAt", () => {
  const c = clock(5_000, SERVER_NOW);
  const deadline = approvalDeadline({ expiresAt: SERVER_NOW + 30_000 }, c);
  expect(approvalWaiting(deadline, c)).toBe(true);
  c.advance(31_000);
  expect(approvalWaiting(deadline, c)).toBe(false);
});
