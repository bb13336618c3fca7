import { describe, expect, test } from 'bun:test';
import { isAllowedHost } from '../../server/middleware/host-guard.ts';
import { isAllowedOrigin } from '../../server/middleware/origin-guard.ts';
import { bearerToken, secretMatches } from '../../server/middleware/auth.ts';
import { createRateLimiter } from '../../server/middleware/rate-limit.ts';
import { methodTable } from '../../server/middleware/method-table.ts';

describe('host guard', () => {
  test('loopback names with any port pass', () => {
    for (const h of ['localhost', '127.0.0.1', '[::1]', 'localhost:9515', '127.0.0.1:1', '[::1]:65535', 'LOCALHOST:80']) {
      expect(isAllowedHost(h)).toBe(true);
    }
  });
  test('everything else is refused', () => {
    for (const h of [undefined, '', 'evil.com', 'localhost.evil.com', '127.0.0.2', '127.0.0.1.nip.io', '0.0.0.0', '[::2]', 'localhost:99999', 'localhost:abc', '::1', 'localhost:9515:1', 'user@localhost']) {
      expect(isAllowedHost(h)).toBe(false);
    }
  });
});

describe('origin guard', () => {
  test('no Origin or chrome-extension:// passes', () => {
    expect(isAllowedOrigin(undefined)).toBe(true);
    expect(isAllowedOrigin('chrome-extension://abcdefghijklmnopabcdefghijklmnop')).toBe(true);
  });
  test('web origins, null and look-alikes are refused', () => {
    for (const o of ['http://localhost:9515', 'https://evil.com', 'null', '', 'chrome-extension://', 'chrome-extension://a.evil.com', 'moz-extension://abc']) {
      expect(isAllowedOrigin(o)).toBe(false);
    }
  });
});

describe('bearer auth helpers', () => {
  const secret = 'a'.repeat(64);
  test('token parsing', () => {
    expect(bearerToken(`Bearer ${secret}`)).toBe(secret);
    expect(bearerToken(`bearer   ${secret}`)).toBe(secret);
    expect(bearerToken(secret)).toBeNull();
    expect(bearerToken('Basic abc')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
  });
  test('constant-time match, any lengths', () => {
    expect(secretMatches(secret, secret)).toBe(true);
    expect(secretMatches(secret, secret.slice(1))).toBe(false);
    expect(secretMatches(secret, secret + 'a')).toBe(false);
    expect(secretMatches(secret, null)).toBe(false);
    expect(secretMatches(null, null)).toBe(true);
  });
});

describe('rate limiter', () => {
  test('sliding window: max per window, then frees up as time passes', () => {
    let now = 1_000_000;
    const rl = createRateLimiter({ max: 3, windowMs: 60_000 }, () => now);
    expect([rl.take(), rl.take(), rl.take(), rl.take()]).toEqual([true, true, true, false]);
    expect(rl.remaining()).toBe(0);
    now += 59_999;
    expect(rl.take()).toBe(false);
    now += 1;
    expect(rl.remaining()).toBe(3);
    expect(rl.take()).toBe(true);
  });
});

describe('405 method table', () => {
  const allowed = methodTable([
    { path: '/*', method: 'ALL' },
    { path: '/health', method: 'GET' },
    { path: '/tools/:name/call', method: 'POST' },
    { path: '/mcp', method: 'POST' },
    { path: '/mcp', method: 'DELETE' },
  ]);
  test('known paths list their methods, unknown paths none', () => {
    expect(allowed('/health').sort()).toEqual(['GET', 'HEAD']);
    expect(allowed('/tools/x_y/call')).toEqual(['POST']);
    expect(allowed('/mcp').sort()).toEqual(['DELETE', 'POST']);
    expect(allowed('/tools/a/b/call')).toEqual([]);
    expect(allowed('/nope')).toEqual([]);
  });
});
