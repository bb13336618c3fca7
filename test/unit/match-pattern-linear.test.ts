/**
 * Plugin match patterns match a URL's path without a RegExp (server/protocol/wildcard.ts): the
 * same answers as the whole-URL RegExp (compileMatchPattern), checked on random paths (bounded),
 * and a path pattern with several `*` against a very long URL of the plugin's own site answers at
 * once instead of backtracking quadratically in the service worker that checks every tab.
 */
import { describe, expect, test } from 'bun:test';
import { compileMatchPattern, matchesPattern } from '../../server/protocol/match-pattern.ts';

describe('match patterns, linear', () => {
  test('agree with the whole-URL RegExp', () => {
    const patterns = ['https://app.example.com/*', 'https://app.example.com/*/projects/*/board*', '*://*.example.com/a*b/*', 'http://127.0.0.1:9847/*', 'https://*/x/*y', 'file:///home/*/notes/*.html', 'http://x.io:80/*', 'https://*.example.com/'];
    let seed = 11;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const pick = (alphabet: string[], len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
    const hosts = ['https://app.example.com', 'http://app.example.com', 'https://a.example.com:8443', 'https://example.com', 'https://evilexample.com', 'http://127.0.0.1:9847', 'http://127.0.0.1:80', 'http://x.io', 'http://x.io:80', 'file://', 'https://app.example.com.evil.io'];
    for (let i = 0; i < 20_000; i++) {
      const url = hosts[rand(hosts.length)] + '/' + pick(['a', 'b', 'y', '/', 'x/', 'projects/', 'board', 'notes/', '.html', 'home/'], rand(8));
      for (const p of patterns) expect([url, p, matchesPattern(url, p)]).toEqual([url, p, compileMatchPattern(p)!.test(url)]);
    }
  });

  test('several * against a very long URL of the plugin\'s own site', () => {
    const url = `https://app.example.com/${'/projects/'.repeat(200_000)}`;
    expect(matchesPattern(url, 'https://app.example.com/*/projects/*/board*')).toBe(false);
    expect(matchesPattern(`${url}board`, 'https://app.example.com/*/projects/*/board*')).toBe(true);
    expect(matchesPattern(url, 'https://other.example.com/*/projects/*/board*')).toBe(false);
  });
});
