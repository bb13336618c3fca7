/** Which match patterns count as "every site or every file" (consent needed at add/install time). */
import { describe, expect, test } from 'bun:test';
import { broadPatterns, isBroadPattern } from '../../server/protocol/plugin-manifest.ts';
import { isMatchPattern } from '../../server/protocol/match-pattern.ts';

describe('broad match patterns', () => {
  test('patterns matching every host or every file are broad', () => {
    for (const p of ['<all_urls>', '*://*/*', 'http://*/*', 'https://*/*', 'https://*/admin/*', 'file:///*', 'https://*.com/*', 'wss://*/*']) {
      expect(isMatchPattern(p)).toBe(true);
      expect(isBroadPattern(p)).toBe(true);
    }
  });

  test('patterns naming a site, a site and its subdomains, or a folder are not', () => {
    for (const p of ['https://app.example.com/*', 'https://*.example.com/*', 'http://127.0.0.1/*', '*://example.com/a/*', 'file:///home/me/notes/*']) {
      expect(isMatchPattern(p)).toBe(true);
      expect(isBroadPattern(p)).toBe(false);
    }
  });

  test('broadPatterns lists the broad ones of a plugin', () => {
    expect(broadPatterns(['https://app.example.com/*', '<all_urls>', 'file:///*'])).toEqual(['<all_urls>', 'file:///*']);
    expect(broadPatterns(['https://app.example.com/*'])).toEqual([]);
  });
});
