/** Every argument of every built-in tool is described: the model reads these to call the tool right. */
import { expect, test } from 'bun:test';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';

test('every property of every built-in input schema has a description', () => {
  const missing: string[] = [];
  const walk = (tool: string, path: string, schema: unknown) => {
    const s = schema as { properties?: Record<string, { description?: string }>; items?: unknown };
    if (!s || typeof s !== 'object') return;
    for (const [key, prop] of Object.entries(s.properties ?? {})) {
      if (!prop.description) missing.push(`${tool}: ${path}${key}`);
      walk(tool, `${path}${key}.`, prop);
    }
    if (s.items) walk(tool, `${path}[].`, s.items);
  };
  for (const t of BROWSER_TOOLS) walk(t.name, '', t.inputSchema);
  expect(missing).toEqual([]);
});
