/** README's table of built-in tools lists exactly the catalog's tools, each in its group, with its default permission when not auto. */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';

test('the README tool table matches server/tools/browser-catalog.ts', () => {
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8');
  const rows = new Map<string, { tool: string; note: string }[]>();
  for (const line of readme.split('\n')) {
    const m = /^\| ([a-z]+)(?: \([^)]*\))? \| (.+) \|$/.exec(line);
    if (!m || !m[2]!.includes('`')) continue;
    rows.set(
      m[1]!,
      [...m[2]!.matchAll(/`([a-z_]+)`(?: \((off|ask)\))?/g)].map((x) => ({ tool: x[1]!, note: x[2] ?? 'auto' })),
    );
  }
  const fromReadme = [...rows.entries()].flatMap(([group, tools]) => tools.map((t) => `${group} ${t.tool} ${t.note}`)).sort();
  const fromCatalog = BROWSER_TOOLS.map((t) => `${t.group} ${t.name} ${t.defaultPermission}`).sort();
  expect(fromReadme).toEqual(fromCatalog);
});
