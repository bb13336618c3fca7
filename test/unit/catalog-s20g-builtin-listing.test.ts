/**
 * tools/list for the built-ins leaves out what only the validator needs: a pattern (each built-in
 * argument with one says its form in its description), length and count caps, and upper bounds of
 * 100,000 or more. Validation still applies every one of them; a plugin tool's pattern is listed.
 */
import { expect, test } from 'bun:test';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { Catalog, type CatalogTool } from '../../server/tools/catalog.ts';

const builtins: CatalogTool[] = BROWSER_TOOLS.map((d) => ({
  name: d.name,
  plugin: 'browser',
  shortName: d.name,
  description: d.description,
  inputSchema: d.inputSchema,
  permission: d.defaultPermission,
  kind: 'browser',
  annotations: d.annotations,
}));
const plugin: CatalogTool = {
  name: 'notes_find',
  plugin: 'notes',
  shortName: 'find',
  description: 'Find notes',
  inputSchema: { type: 'object', properties: { day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description: 'Day' } }, required: ['day'] },
  permission: 'ask',
  kind: 'plugin',
};
const c = new Catalog(1, [...builtins, plugin]);
const listed = (name: string) => c.mcpToolsList().tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, Record<string, unknown>> };

test('built-in listed schemas carry no pattern, length or count cap, nor an upper bound of 100,000 or more', () => {
  const found: string[] = [];
  const walk = (tool: string, path: string, node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    for (const k of ['pattern', 'maxLength', 'maxItems']) if (k in n) found.push(`${tool} ${path} ${k}`);
    if (typeof n.maximum === 'number' && n.maximum >= 100_000) found.push(`${tool} ${path} maximum`);
    for (const [name, sub] of Object.entries((n.properties ?? {}) as Record<string, unknown>)) walk(tool, `${path}.${name}`, sub);
    if (n.items) walk(tool, `${path}[]`, n.items);
  };
  for (const t of c.mcpToolsList().tools) if (t.name.startsWith('browser_') || t.name.startsWith('extension_') || t.name.startsWith('plugin_')) walk(t.name, '', t.inputSchema);
  expect(found).toEqual([]);
  // Meaningful bounds stay: a double click at most, a quality out of 100; properties named like keywords stay.
  expect(listed('browser_click_element').properties.clickCount?.maximum).toBe(3);
  expect(listed('browser_screenshot_tab').properties.quality?.maximum).toBe(100);
  expect(listed('browser_get_tab_content').properties.maxLength).toEqual({ type: 'integer', description: 'Default 50000' });
  // The ref's form is in its description.
  expect(listed('browser_click_element').properties.ref).toEqual({ type: 'string', description: 'Ref from browser_snapshot (fNeN: in an iframe)' });
});

test('each built-in argument whose pattern is not listed says its form in its description', () => {
  const forms: Record<string, string> = {};
  const walk = (tool: string, path: string, node: unknown, listedNode: unknown) => {
    const n = node as Record<string, unknown>;
    const l = listedNode as Record<string, unknown>;
    if (typeof n.pattern === 'string') forms[`${tool} ${path}`] = String(l.description);
    for (const [name, sub] of Object.entries((n.properties ?? {}) as Record<string, unknown>)) walk(tool, `${path}.${name}`, sub, (l.properties as Record<string, unknown>)[name]);
    if (n.items) walk(tool, `${path}[]`, n.items, l.items);
  };
  for (const d of BROWSER_TOOLS) walk(d.name, '', d.inputSchema, listed(d.name));
  expect(Object.keys(forms).length).toBeGreaterThan(10);
  for (const [where, description] of Object.entries(forms)) {
    expect({ where, says: /fNeN|e\.g\. '1-5, 8'|lowercase words joined by "-"/.test(description) }).toEqual({ where, says: true });
  }
});

test('validation still applies what the listing leaves out; a plugin tool lists its pattern and caps', () => {
  const click = c.get('browser_click_element')!;
  expect(c.validate(click, { tabId: 1, ref: 'e12' })).toBeNull();
  expect(c.validate(click, { tabId: 1, ref: 'button Save' })?.path).toBe('/ref');
  expect(c.validate(c.get('browser_group_tabs')!, { tabIds: Array.from({ length: 101 }, (_, i) => i + 1) })?.path).toBe('/tabIds');
  expect(c.validate(c.get('browser_click_at')!, { tabId: 1, x: 100_001, y: 1 })?.path).toBe('/x');
  expect(c.validate(c.get('browser_print_pdf')!, { tabId: 1, pageRanges: 'all of them' })?.path).toBe('/pageRanges');
  expect(listed('notes_find').properties.day).toEqual({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description: 'Day' });
});
