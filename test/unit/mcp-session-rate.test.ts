/** The session-creation limiter: seconds until a slot frees, a limit read on every take, and the config key's validation. */
import { describe, expect, test } from 'bun:test';
import { createRateLimiter } from '../../server/middleware/rate-limit.ts';
import { normalizeConfig } from '../../server/state/config.ts';

describe('rate limiter', () => {
  test('retryAfterMs: 0 while a slot is free, then the time until the oldest counted hit leaves the window', () => {
    let now = 1_000;
    const l = createRateLimiter({ max: 2, windowMs: 60_000 }, () => now);
    expect(l.retryAfterMs()).toBe(0);
    expect(l.take()).toBe(true);
    now = 11_000;
    expect(l.take()).toBe(true);
    expect(l.take()).toBe(false);
    expect(l.retryAfterMs()).toBe(50_000);
    now = 61_000;
    expect(l.retryAfterMs()).toBe(0);
    expect(l.take()).toBe(true);
  });

  test('a spec given as a function is read on every take (a raised limit applies at once)', () => {
    let max = 1;
    const l = createRateLimiter(() => ({ max, windowMs: 60_000 }), () => 0);
    expect(l.take()).toBe(true);
    expect(l.take()).toBe(false);
    max = 3;
    expect(l.take()).toBe(true);
    expect(l.take()).toBe(true);
    expect(l.take()).toBe(false);
    // Lowered below the hits already counted: no slot until enough of them leave the window.
    max = 1;
    expect(l.remaining()).toBe(0);
    expect(l.retryAfterMs()).toBe(60_000);
  });
});

describe('config.json mcpSessionsPerMinute', () => {
  test('a whole number from 1 to 10000 is kept; anything else is dropped', () => {
    expect(normalizeConfig({ mcpSessionsPerMinute: 30 }).mcpSessionsPerMinute).toBe(30);
    for (const bad of [0, -1, 1.5, 10_001, '30', null, true]) expect(normalizeConfig({ mcpSessionsPerMinute: bad }).mcpSessionsPerMinute).toBeUndefined();
    expect('mcpSessionsPerMinute' in normalizeConfig({})).toBe(false);
  });
});
