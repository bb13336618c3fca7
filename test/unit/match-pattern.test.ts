/** Chrome match patterns as the extension applies them to decide which tabs belong to a plugin. */
import { describe, expect, test } from 'bun:test';
import { compileMatchPattern, matchesPattern, urlMatchesPlugin } from '../../server/protocol/match-pattern.ts';

describe('match patterns', () => {
  test('scheme, host wildcard and path wildcard', () => {
    expect(matchesPattern('https://app.slack.com/client/T1', 'https://app.slack.com/*')).toBe(true);
    expect(matchesPattern('http://app.slack.com/client', 'https://app.slack.com/*')).toBe(false);
    expect(matchesPattern('https://a.b.example.com/x', 'https://*.example.com/*')).toBe(true);
    expect(matchesPattern('https://example.com/x', 'https://*.example.com/*')).toBe(true);
    expect(matchesPattern('https://evilexample.com/x', 'https://*.example.com/*')).toBe(false);
    expect(matchesPattern('https://example.com.evil.io/x', 'https://*.example.com/*')).toBe(false);
    expect(matchesPattern('http://x.io/', '*://x.io/*')).toBe(true);
    expect(matchesPattern('ftp://x.io/', '*://x.io/*')).toBe(false);
    expect(matchesPattern('https://x.io/a/b/c', 'https://x.io/a/*/c')).toBe(true);
    expect(matchesPattern('https://x.io/ab', 'https://x.io/a')).toBe(false);
  });

  test('a host without a port matches any port; special characters are literal', () => {
    expect(matchesPattern('http://127.0.0.1:41234/pages/app.html', 'http://127.0.0.1/pages/*')).toBe(true);
    expect(matchesPattern('http://127.0.0.1:41234/pages/app.html', 'http://127.0.0.1:5/pages/*')).toBe(false);
    expect(matchesPattern('http://127x0x0x1/pages/a', 'http://127.0.0.1/pages/*')).toBe(false);
    expect(matchesPattern('https://x.io/a?b=1', 'https://x.io/a?b=*')).toBe(true);
  });

  test('<all_urls> and invalid patterns', () => {
    expect(matchesPattern('https://any.where/', '<all_urls>')).toBe(true);
    expect(matchesPattern('chrome://settings', '<all_urls>')).toBe(false);
    expect(compileMatchPattern('not a pattern')).toBeNull();
    expect(matchesPattern('https://x.io/', 'not a pattern')).toBe(false);
    expect(compileMatchPattern('https://x.io')).toBeNull(); // a path is required
  });

  test('plugins: include patterns minus exclude patterns, fragment ignored', () => {
    const plugin = { urlPatterns: ['https://app.example.com/*'], excludePatterns: ['https://app.example.com/login*'] };
    expect(urlMatchesPlugin('https://app.example.com/home#x', plugin)).toBe(true);
    expect(urlMatchesPlugin('https://app.example.com/login?next=/', plugin)).toBe(false);
    expect(urlMatchesPlugin('https://other.com/', plugin)).toBe(false);
    expect(urlMatchesPlugin(undefined, plugin)).toBe(false);
    expect(urlMatchesPlugin('https://app.example.com/#/login', plugin)).toBe(true);
  });
});
