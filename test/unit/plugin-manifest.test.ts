import { describe, expect, test } from 'bun:test';
import { isMatchPattern } from '../../server/protocol/match-pattern.ts';
import {
  parseToolsJson,
  pluginNameFromPackage,
  resolveSettings,
  validateSettings,
} from '../../server/protocol/plugin-manifest.ts';
import type { ConfigSchema } from '../../server/plugins/types.ts';

const good = () => ({
  name: 'myapp',
  displayName: 'My App',
  description: 'Does things',
  version: '1.0.0',
  sdkVersion: '0.1.0',
  urlPatterns: ['https://app.example.com/*'],
  tools: [{ name: 'list_items', description: 'List', inputSchema: { type: 'object', properties: {} } }],
});

describe('package names', () => {
  test('plain and scoped plugin packages give the plugin name', () => {
    expect(pluginNameFromPackage('opentabs-plugin-slack')).toBe('slack');
    expect(pluginNameFromPackage('@acme/opentabs-plugin-my-app')).toBe('my-app');
  });
  test('other packages are not plugins', () => {
    for (const n of ['slack', 'opentabs-plugin-', 'opentabs-plugin-Slack', '@acme/slack', 'x-opentabs-plugin-a', 'opentabs-plugin-a_b']) {
      expect(pluginNameFromPackage(n)).toBeNull();
    }
  });
});

describe('match patterns', () => {
  test('accepts Chrome match patterns', () => {
    for (const p of ['http://127.0.0.1/*', 'https://*.slack.com/*', '*://example.com/a/*', '<all_urls>', 'file:///tmp/*']) expect(isMatchPattern(p)).toBe(true);
  });
  test('rejects bad ports, missing paths and junk', () => {
    for (const p of ['http://127.0.0.1:99999/*', 'https://example.com', 'example.com/*', 'ftp://x/*', 'https://a.*.com/*']) expect(isMatchPattern(p)).toBe(false);
  });
});

describe('tools.json validation names the bad field', () => {
  test('a good manifest parses, excludePatterns defaults to []', () => {
    const r = parseToolsJson(good());
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.excludePatterns).toEqual([]);
  });
  const cases: [string, (m: Record<string, any>) => void, RegExp][] = [
    ['name', (m) => (m.name = 'My App'), /^name: plugin names are lowercase/],
    ['reserved name', (m) => (m.name = 'browser'), /^name: "browser" is reserved/],
    ['displayName', (m) => (m.displayName = ''), /^displayName: displayName must not be empty/],
    ['urlPatterns empty', (m) => (m.urlPatterns = []), /^urlPatterns: urlPatterns must list/],
    ['urlPatterns bad', (m) => (m.urlPatterns = ['localhost:3000/*']), /^urlPatterns\.0: "localhost:3000\/\*" is not a Chrome match pattern/],
    ['tool name', (m) => (m.tools[0].name = 'List-Items'), /^tools\.0\.name: tool names must be lowercase snake_case/],
    ['inputSchema type', (m) => (m.tools[0].inputSchema = { type: 'string' }), /^tools\.0\.inputSchema: inputSchema must be a JSON Schema with "type": "object"/],
    ['duplicate tools', (m) => m.tools.push({ ...m.tools[0] }), /duplicate tool name "list_items"/],
    ['homepage', (m) => (m.homepage = 'not a url'), /^homepage: homepage must be a URL/],
    ['select without options', (m) => (m.configSchema = { mode: { type: 'select' } }), /^configSchema\.mode: a select field needs options/],
    ['config field type', (m) => (m.configSchema = { mode: { type: 'color' } }), /^configSchema\.mode\.type: type must be one of/],
    ['default of wrong type', (m) => (m.configSchema = { n: { type: 'number', default: 'x' } }), /^configSchema\.n: default does not match/],
  ];
  for (const [what, mutate, re] of cases) {
    test(what, () => {
      const m = good() as Record<string, any>;
      mutate(m);
      const r = parseToolsJson(m);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(re);
    });
  }
});

describe('settings', () => {
  const schema: ConfigSchema = {
    pageSize: { type: 'number', default: 5 },
    order: { type: 'select', options: ['asc', 'desc'], default: 'asc' },
    archived: { type: 'boolean' },
    prefix: { type: 'string' },
    site: { type: 'url', required: true },
  };
  test('valid settings pass', () => {
    expect(validateSettings(schema, { pageSize: 10, order: 'desc', archived: true, prefix: 'x', site: 'https://a.example' })).toBeNull();
  });
  test('each field type is checked and the message names the field', () => {
    const base = { site: 'https://a.example' };
    expect(validateSettings(schema, { ...base, pageSize: '10' })).toBe('pageSize: must be a number');
    expect(validateSettings(schema, { ...base, order: 'up' })).toBe('order: must be one of "asc", "desc"');
    expect(validateSettings(schema, { ...base, archived: 'yes' })).toBe('archived: must be true or false');
    expect(validateSettings(schema, { ...base, prefix: 3 })).toBe('prefix: must be a string');
    expect(validateSettings(schema, { site: 'ftp://x' })).toBe('site: must be an http(s) URL');
    expect(validateSettings(schema, { site: 'nope' })).toBe('site: must be a valid URL');
    expect(validateSettings(schema, { ...base, colour: 'red' })).toMatch(/^colour: unknown setting \(known: pageSize, order/);
  });
  test('a required field without default must be present', () => {
    expect(validateSettings(schema, { pageSize: 3 })).toBe('site: is required');
  });
  test('resolved settings = defaults overlaid with valid saved values', () => {
    expect(resolveSettings(schema, { pageSize: 9, order: 'bogus', prefix: 'p-' })).toEqual({ pageSize: 9, order: 'asc', prefix: 'p-' });
    expect(resolveSettings(undefined, { a: 1 })).toEqual({});
  });
});
