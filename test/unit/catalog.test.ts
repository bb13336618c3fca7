/** tools/catalog.ts: snapshots from built-ins + plugins + permissions, the listings made from them, and change events. */
import { expect, test } from 'bun:test';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { DISABLED_PREFIX, mcpOutputSchema } from '../../server/tools/catalog.ts';
import { callPathParts, NOTES } from './call-path.fixture.ts';

test('a snapshot holds every built-in and each plugin tool with its effective permission', async () => {
  const { catalog } = await callPathParts();
  const c = catalog.current();
  for (const d of BROWSER_TOOLS) expect(c.get(d.name)?.permission).toBe(d.defaultPermission);
  const note = c.get('notes_get')!;
  expect(note).toMatchObject({ plugin: 'notes', shortName: 'get', kind: 'plugin', permission: 'ask', annotations: { readOnlyHint: true } });
  expect(c.byPlugin.get('notes')?.map((t) => t.name)).toEqual(['notes_get']);
});

test('rebuild swaps in a new version, tells listeners what changed, and keeps the old snapshot intact', async () => {
  const { catalog, config, setPlugins } = await callPathParts();
  const before = catalog.current();
  const seen: string[] = [];
  const off = catalog.onChange((c, change) => seen.push(`${c.version}:${change}`));
  await config.setToolPermission('notes', 'get', 'off');
  setPlugins([]);
  const after = catalog.rebuild('config');
  catalog.rebuild('pageTools');
  off();
  catalog.rebuild('config');
  expect(seen).toEqual([`${after.version}:config`, `${after.version + 1}:pageTools`]);
  expect(before.get('notes_get')?.permission).toBe('ask');
  expect(after.get('notes_get')).toBeUndefined();
});

test('tools/list: off tools say [Disabled], schemas are compact, output schemas and annotations are listed, and the JSON is made once per version', async () => {
  const { catalog, config } = await callPathParts();
  await config.setToolPermission('notes', 'get', 'off');
  const c = catalog.rebuild();
  const list = c.mcpToolsList().tools;
  const note = list.find((t) => t.name === 'notes_get')!;
  expect(note.description.startsWith(DISABLED_PREFIX)).toBe(true);
  expect(note.inputSchema).toEqual({ type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] });
  expect(list.find((t) => t.name === 'browser_list_tabs')?.outputSchema).toBeDefined();
  expect(list.every((t) => t.annotations !== undefined)).toBe(true);
  expect(c.mcpToolsListJson()).toBe(c.mcpToolsListJson());
  expect(JSON.parse(c.mcpToolsListJson())).toEqual(list);
  expect(c.listings('notes').map((t) => t.name)).toEqual(['notes_get']);
  expect(JSON.parse(c.listingsJson('nobody')).tools).toEqual([]);
});

test('validate names the path and the problem, and accepts good input', async () => {
  const { catalog } = await callPathParts();
  const c = catalog.current();
  const tool = c.get(NOTES.tools[0]!.fullName)!;
  expect(c.validate(tool, { id: 3 })).toBeNull();
  const bad = c.validate(tool, { id: 'three' })!;
  expect(bad.path).toBe('/id');
  expect(bad.message).toContain('integer');
  expect(c.validate(tool, { id: 1, extra: true })?.message).toContain('extra');
});

test('listed schemas leave out trivial lower bounds and the type beside a string enum, while validation still applies them', async () => {
  const { catalog } = await callPathParts();
  const c = catalog.current();
  const listed = (name: string) => c.mcpToolsList().tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, Record<string, unknown>> };
  expect(listed('browser_close_tab').properties.tabId).toEqual({ type: 'integer', description: 'Tab id' });
  expect(listed('browser_click_element').properties.button).toEqual({ enum: ['left', 'right'], description: 'Default left' });
  expect(listed('browser_click_element').properties.clickCount?.maximum).toBe(3);
  expect(c.validate(c.get('browser_close_tab')!, { tabId: 0 })?.path).toBe('/tabId');
  expect(c.validate(c.get('browser_click_element')!, { tabId: 1, button: 'side' })?.path).toBe('/button');
  // No middle button (on Linux it pastes the user's primary selection): refused by the schema, naming the allowed values.
  for (const [name, args] of [['browser_click_element', { selector: '#a' }], ['browser_click_at', { x: 1, y: 1 }]] as const) {
    expect(listed(name).properties.button?.enum).toEqual(['left', 'right']);
    expect(c.validate(c.get(name)!, { tabId: 1, ...args, button: 'middle' })).toEqual({ path: '/button', message: 'must be one of "left", "right"' });
    expect(c.validate(c.get(name)!, { tabId: 1, ...args, button: 'right' })).toBeNull();
  }
});

test('listed output schemas are named by their content ($id), so a validating client compiles each once', async () => {
  const { catalog } = await callPathParts();
  const out = (name: string, c = catalog.current()) => c.mcpToolsList().tools.find((t) => t.name === name)?.outputSchema as Record<string, unknown>;
  const listTabs = out('browser_list_tabs');
  expect(listTabs.$id).toMatch(/^urn:opentabs:schema:[0-9a-z]+$/);
  expect(out('browser_get_tab_info').$id).not.toBe(listTabs.$id);
  // The same content keeps its name across catalog versions; the rest of the schema is unchanged.
  expect(out('browser_list_tabs', catalog.rebuild()).$id).toBe(listTabs.$id);
  expect(listTabs.properties).toHaveProperty('tabs');
  // Changed content, a changed name; a schema that names itself keeps its own.
  const a = mcpOutputSchema({ type: 'object', properties: { title: { type: 'string' } } });
  expect(mcpOutputSchema({ type: 'object', properties: { title: { type: 'string' } } }).$id).toBe(a.$id);
  expect(mcpOutputSchema({ type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } } }).$id).not.toBe(a.$id);
  expect(mcpOutputSchema({ $id: 'https://example.com/note.json', type: 'object' }).$id).toBe('https://example.com/note.json');
});

test('validators survive catalog rebuilds, built-in and plugin alike; a reloaded plugin schema compiles anew; a schema Ajv refuses is still named', async () => {
  const { ajvClass } = await import('../../server/tools/ajv.ts');
  const proto = ajvClass().prototype as { compile: (...a: unknown[]) => unknown };
  const compile = proto.compile;
  let compiles = 0;
  proto.compile = function (this: unknown, ...a: unknown[]) {
    compiles++;
    return compile.apply(this, a);
  };
  try {
    const { catalog, setPlugins } = await callPathParts();
    const check = () => {
      const c = catalog.current();
      expect(c.validate(c.get('browser_click_element')!, { tabId: 1, ref: 'e1' })).toBeNull();
      expect(c.validate(c.get('browser_click_element')!, { tabId: 'one' })).toMatchObject({ path: '/tabId' });
      expect(c.validate(c.get('notes_get')!, { id: 1 })).toBeNull();
    };
    check();
    const afterFirst = compiles;
    for (let i = 0; i < 3; i++) {
      catalog.rebuild();
      check();
    }
    // Three new snapshots, nothing compiled again: each tool's validator stays with its schema.
    expect(compiles - afterFirst).toBe(0);
    // A plugin reloaded brings a new schema object: compiled once, with what it now says.
    setPlugins([{ ...NOTES, tools: [{ ...NOTES.tools[0]!, inputSchema: { type: 'object', properties: { id: { type: 'string' } } } }] }]);
    const reloaded = catalog.rebuild();
    expect(reloaded.validate(reloaded.get('notes_get')!, { id: 1 })).toMatchObject({ path: '/id' });
    expect(reloaded.validate(reloaded.get('notes_get')!, { id: 'a' })).toBeNull();
    expect(compiles - afterFirst).toBe(1);
    setPlugins([{ ...NOTES, tools: [{ ...NOTES.tools[0]!, inputSchema: { type: 'object', properties: { id: { type: 'banana' } } } }] }]);
    const c = catalog.rebuild();
    expect(c.validate(c.get('notes_get')!, { id: 1 })).toMatchObject({ schemaError: true, message: expect.stringContaining('input schema is invalid') });
  } finally {
    proto.compile = compile;
  }
});
