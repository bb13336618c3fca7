import { describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { manifestFromDefinition } from '../../plugins/tooling/index.ts';
import { SchemaValidators } from '../../server/tools/validate.ts';

const pkg = { name: 'opentabs-plugin-shop', version: '1.0.0', pluginName: 'shop', warnings: [] };

function manifest() {
  const def = definePlugin({
    name: 'shop',
    displayName: 'Shop',
    description: 'Orders',
    urlPatterns: ['http://127.0.0.1/*'],
    isReady: () => true,
    tools: [
      defineTool({
        name: 'list_orders',
        description: 'List orders',
        input: v.object({ status: v.optional(v.string()), range: v.optional(v.object({ from: v.string() })) }),
        output: v.object({ ids: v.array(v.string()) }),
        handle: () => ({ ids: [] }),
      }),
      defineTool({
        name: 'search',
        description: 'Search with free-form filters',
        input: v.looseObject({ q: v.string() }),
        output: v.object({}),
        handle: () => ({}),
      }),
    ],
  });
  return manifestFromDefinition(def, pkg);
}

describe('tool inputs reject unknown keys by default', () => {
  test('v.object input → additionalProperties: false, also nested; output schemas unchanged', () => {
    const m = manifest();
    const list = m.tools.find((t) => t.name === 'list_orders')!;
    const input = list.inputSchema as { additionalProperties?: unknown; properties: Record<string, { additionalProperties?: unknown }> };
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.range.additionalProperties).toBe(false);
    expect((list.outputSchema as { additionalProperties?: unknown }).additionalProperties).toBeUndefined();
  });
  test('v.looseObject opts out', () => {
    const search = manifest().tools.find((t) => t.name === 'search')!;
    expect((search.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBeUndefined();
  });
  test('a misspelled filter is rejected with the key and the allowed keys named', () => {
    const list = manifest().tools.find((t) => t.name === 'list_orders')!;
    const validators = new SchemaValidators();
    const ok = validators.validate('shop_list_orders', list.inputSchema as Record<string, unknown>, { status: 'open' });
    expect(ok).toBeNull();
    const bad = validators.validate('shop_list_orders', list.inputSchema as Record<string, unknown>, { stauts: 'open' });
    expect(bad).not.toBeNull();
    expect(bad!.path).toBe('/stauts');
    expect(bad!.message).toContain('"stauts"');
    expect(bad!.message).toContain('allowed: status, range');
    const nested = validators.validate('shop_list_orders', list.inputSchema as Record<string, unknown>, { range: { from: 'x', too: 'y' } });
    expect(nested!.path).toBe('/range/too');
    expect(nested!.message).toContain('allowed: from');
  });
});
