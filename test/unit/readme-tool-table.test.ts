/** README's table of built-in tools is exactly what the declarations render (`npm run docs:tools` rewrites it). */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { readmeToolTable, renderToolTable } from '../../server/tools/tool-table.ts';

test('the README tool table is the one rendered from the declarations (run `npm run docs:tools` when this fails)', () => {
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8');
  expect(readmeToolTable(readme)).toBe(renderToolTable());
});

test('the rendered table names every built-in tool once, with its default permission when not auto', () => {
  const table = renderToolTable();
  for (const t of BROWSER_TOOLS) {
    expect(table.split(`\`${t.name}\``).length).toBe(2);
    if (t.defaultPermission !== 'auto') expect(table).toContain(`\`${t.name}\` (${t.defaultPermission})`);
  }
});
