/**
 * extension/tools/wildcard.ts: the tools' URL patterns matched without a RegExp. Same answers as the
 * RegExp the tools built before (checked on random short texts and patterns, bounded), and a
 * pattern that made that RegExp backtrack for minutes is just a no-match.
 */
import { describe, expect, test } from 'bun:test';
import { wildcardMatch } from '../../extension/tools/wildcard.ts';

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&');
const viaRegExp = (text: string, pattern: string, anyChar: boolean) =>
  new RegExp(`^${pattern.split('').map((c) => (c === '*' ? '.*' : anyChar && c === '?' ? '.' : escape(c))).join('')}$`, 's').test(text);

describe('wildcardMatch', () => {
  test('agrees with the RegExp form on random texts and patterns', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const pick = (alphabet: string, len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
    for (let i = 0; i < 20_000; i++) {
      const text = pick('ab?*./', rand(9));
      const pattern = pick('ab*?./', rand(7));
      for (const anyChar of [false, true]) {
        expect([text, pattern, anyChar, wildcardMatch(text, pattern, { anyChar })]).toEqual([text, pattern, anyChar, viaRegExp(text, pattern, anyChar)]);
      }
    }
  });

  test('URL shapes', () => {
    expect(wildcardMatch('https://app.example.com/api/ads?x=1', '*/api/ads*')).toBe(true);
    expect(wildcardMatch('https://app.example.com/api/user', '*://*/api/ads*')).toBe(false);
    expect(wildcardMatch('https://a.b/x', 'https://?.b/x', { anyChar: true })).toBe(true);
    expect(wildcardMatch('https://a.b/x', 'https://?.b/x')).toBe(false);
    expect(wildcardMatch('', '*')).toBe(true);
    expect(wildcardMatch('', '')).toBe(true);
    expect(wildcardMatch('a', '')).toBe(false);
  });

  test('a pattern that backtracks a RegExp for minutes is a plain no-match', () => {
    const url = `http://127.0.0.1/${'a'.repeat(5000)}`;
    expect(wildcardMatch(url, `*${'a*'.repeat(40)}b`)).toBe(false);
    expect(wildcardMatch(url, `*${'a*'.repeat(40)}`)).toBe(true);
  });
});
