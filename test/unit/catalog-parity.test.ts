/**
 * One declaration per built-in tool (server/protocol/browser-tools/): `tsc` already fails on a
 * missing or extra extension handler; this checks the same at run time, and that tools served by
 * the server have a server handler instead.
 */
import { describe, expect, test } from 'bun:test';
import Ajv from 'ajv';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { SERVER_TOOL_HANDLERS } from '../../server/tools/server-tools.ts';
import { TOOL_HANDLERS as HANDLERS } from '../../extension/tools/index.ts';

const TOOL_HANDLERS: Record<string, unknown> = HANDLERS;

describe('browser tool catalog ↔ implementations', () => {
  test('extension implements exactly the catalog tools it runs', () => {
    const catalog = BROWSER_TOOLS.filter((t) => t.servedBy !== 'server').map((t) => t.name).sort();
    const implemented = Object.keys(TOOL_HANDLERS).sort();
    expect(implemented).toEqual(catalog);
    for (const name of implemented) expect(typeof TOOL_HANDLERS[name]).toBe('function');
  });

  test('server-served catalog tools have a server handler and no extension implementation', () => {
    for (const t of BROWSER_TOOLS.filter((x) => x.servedBy === 'server')) {
      expect(typeof SERVER_TOOL_HANDLERS[t.name]).toBe('function');
      expect(TOOL_HANDLERS[t.name]).toBeUndefined();
    }
  });

  test('every entry is well formed: unique name, prefix, compilable object schema', () => {
    const ajv = new Ajv({ strict: false });
    const names = new Set<string>();
    for (const t of BROWSER_TOOLS) {
      expect(names.has(t.name)).toBe(false);
      names.add(t.name);
      expect(t.name).toMatch(/^(browser|extension|plugin)_[a-z_]+$/);
      expect(t.description.length).toBeGreaterThan(10);
      expect(t.inputSchema.type).toBe('object');
      expect(() => ajv.compile(t.inputSchema)).not.toThrow();
    }
  });

  test('tabId-taking tools reject a non-integer tabId', () => {
    const ajv = new Ajv({ strict: false });
    const withTab = BROWSER_TOOLS.filter((t) => (t.inputSchema.required as string[] | undefined)?.includes('tabId'));
    expect(withTab.length).toBeGreaterThan(5);
    for (const t of withTab) expect(ajv.compile(t.inputSchema)({ tabId: 'x' })).toBe(false);
  });
});

test('every server-served handler is a catalog tool marked servedBy server, and the other way round (no dead aliases)', () => {
  const served = BROWSER_TOOLS.filter((t) => t.servedBy === 'server').map((t) => t.name).sort();
  expect(Object.keys(SERVER_TOOL_HANDLERS).sort()).toEqual(served);
});
