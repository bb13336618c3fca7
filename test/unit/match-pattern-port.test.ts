/** A plugin may restrict itself to one port; a pattern without a port still means any port. */
import { describe, expect, test } from 'bun:test';
import { isMatchPattern, matchesPattern, urlMatchesPlugin } from '../../server/protocol/match-pattern.ts';

describe('match patterns with a port', () => {
  test('declarable: exact or *. host with a port; bad ports refused', () => {
    expect(isMatchPattern('http://127.0.0.1:9847/*')).toBe(true);
    expect(isMatchPattern('https://*.example.com:8443/*')).toBe(true);
    expect(isMatchPattern('http://localhost:3000/app/*')).toBe(true);
    expect(isMatchPattern('http://127.0.0.1/*')).toBe(true);
    expect(isMatchPattern('http://127.0.0.1:/*')).toBe(false);
    expect(isMatchPattern('http://127.0.0.1:0/*')).toBe(false);
    expect(isMatchPattern('http://127.0.0.1:70000/*')).toBe(false);
    expect(isMatchPattern('http://127.0.0.1:80a/*')).toBe(false);
    expect(isMatchPattern('http://*:8080/*')).toBe(false);
  });
  test('a pattern with a port matches only that port', () => {
    expect(matchesPattern('http://127.0.0.1:9847/board', 'http://127.0.0.1:9847/*')).toBe(true);
    expect(matchesPattern('http://127.0.0.1:9515/health', 'http://127.0.0.1:9847/*')).toBe(false);
    expect(matchesPattern('http://127.0.0.1/board', 'http://127.0.0.1:9847/*')).toBe(false);
    expect(matchesPattern('http://127.0.0.1:98470/board', 'http://127.0.0.1:9847/*')).toBe(false);
    expect(matchesPattern('https://a.example.com:8443/x', 'https://*.example.com:8443/*')).toBe(true);
    expect(matchesPattern('https://a.example.com:9443/x', 'https://*.example.com:8443/*')).toBe(false);
  });
  test('a default port also matches the URL without a port (browsers drop it)', () => {
    expect(matchesPattern('http://example.com/x', 'http://example.com:80/*')).toBe(true);
    expect(matchesPattern('https://example.com/x', 'https://example.com:443/*')).toBe(true);
    expect(matchesPattern('https://example.com:8443/x', 'https://example.com:443/*')).toBe(false);
  });
  test('without a port: any port, as before', () => {
    expect(matchesPattern('http://127.0.0.1:9515/health', 'http://127.0.0.1/*')).toBe(true);
    expect(matchesPattern('http://127.0.0.1/x', 'http://127.0.0.1/*')).toBe(true);
  });
  test('plugin matching honours the port in include and exclude patterns', () => {
    const plugin = { urlPatterns: ['http://127.0.0.1:9847/*'], excludePatterns: ['http://127.0.0.1:9847/login*'] };
    expect(urlMatchesPlugin('http://127.0.0.1:9847/', plugin)).toBe(true);
    expect(urlMatchesPlugin('http://127.0.0.1:9847/login', plugin)).toBe(false);
    expect(urlMatchesPlugin('http://127.0.0.1:9515/', plugin)).toBe(false);
  });
});
