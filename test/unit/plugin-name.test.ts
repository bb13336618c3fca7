import { describe, expect, test } from 'bun:test';
import { fitPluginName, PLUGIN_NAME_RE, reservedPluginName } from '../../server/protocol/plugin-name.ts';
import { recordPluginName } from '../../extension/sidepanel/record-view.ts';

describe('plugin names fitted from free text', () => {
  test('typos and spellings become the name plugin create accepts', () => {
    expect(fitPluginName('My App')).toBe('my-app');
    expect(fitPluginName('my_app')).toBe('my-app');
    expect(fitPluginName('MyApp')).toBe('my-app');
    expect(fitPluginName('-my--app-')).toBe('my-app');
    expect(fitPluginName('jira')).toBe('jira');
  });
  test('nothing valid, or a reserved name, gives null', () => {
    expect(fitPluginName('---')).toBeNull();
    expect(fitPluginName('')).toBeNull();
    expect(fitPluginName('Browser')).toBeNull();
    expect(fitPluginName('tab12')).toBeNull();
  });
});

describe('the side panel Record view names a plugin its printed command accepts', () => {
  // Each host the printed `opentabs plugin create <name> --from-capture tab:N` once failed on, or
  // that needs a fallback: leading/trailing hyphens, punycode (xn--), reserved words, an IP, no host.
  const cases: Array<[string, string]> = [
    ['https://app.example.com', 'app'],
    ['https://www.github.com', 'github'],
    ['https://-evil-.example.com', 'evil'],
    ['https://xn--bcher-kva.example', 'xn-bcher-kva'],
    ['https://browser.example.com', 'browser-app'],
    ['https://plugin.example.com', 'plugin-app'],
    ['https://tab7.example.com', 'tab7-app'],
    ['http://127.0.0.1:8080', '127'],
    ['http://[::1]:3000', 'my-app'],
    ['not a url', 'my-app'],
  ];
  for (const [origin, name] of cases) {
    test(origin, () => {
      const got = recordPluginName(origin);
      expect(got).toBe(name);
      expect(PLUGIN_NAME_RE.test(got)).toBe(true);
      expect(reservedPluginName(got)).toBeNull();
    });
  }
});
