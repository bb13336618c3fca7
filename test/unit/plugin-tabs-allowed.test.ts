/**
 * allowedFor (extension/background/plugin-tabs.ts): a plugin's page by its patterns, never one in
 * the OpenTabs config folder. http(s) URLs skip the URL parse of the folder check (they cannot be
 * file:// ones); everything else still goes through it.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { allowedFor } from '../../extension/background/plugin-tabs.ts';
import { setUrlPolicy } from '../../extension/tools/url-policy.ts';

afterAll(() => setUrlPolicy({}));

describe('allowedFor', () => {
  test('patterns decide for http(s); file:// inside the config folder is refused whatever the patterns', () => {
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['/home/me/.opentabs'] });
    const web = { urlPatterns: ['http://127.0.0.1/*', 'https://app.example.com/*'], excludePatterns: ['https://app.example.com/logout*'] };
    expect(allowedFor('http://127.0.0.1:8080/pages/index.html', web)).toBe(true);
    expect(allowedFor('https://app.example.com/inbox#x', web)).toBe(true);
    expect(allowedFor('https://app.example.com/logout', web)).toBe(false);
    expect(allowedFor('https://other.example.com/', web)).toBe(false);
    expect(allowedFor(undefined, web)).toBe(false);
    const files = { urlPatterns: ['file:///*', '<all_urls>'], excludePatterns: [] };
    expect(allowedFor('file:///home/me/notes.html', files)).toBe(true);
    expect(allowedFor('file:///home/me/.opentabs/auth.json', files)).toBe(false);
    expect(allowedFor('file:///HOME/me/.OpenTabs/extension/x.html', files)).toBe(false);
    expect(allowedFor('file:///home/me/%2Eopentabs/auth.json', files)).toBe(false);
    expect(allowedFor('FILE:///home/me/.opentabs/auth.json', files)).toBe(false);
  });
});
